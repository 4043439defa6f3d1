"""Webhook targets: the connection goes only to an address that was checked, never to a second DNS answer.

Everything here stays on loopback: a receiver on 127.0.0.1 stands in for the private service an attacker would aim
at, and the fake resolver (conftest.fake_dns) decides what a name resolves to.
"""

import http.server
import socket
import threading
from contextlib import contextmanager

import pytest
import requests

from reminders import webhooks


@contextmanager
def loopback_receiver():
    """An HTTP server on 127.0.0.1 that answers 204 and remembers the Host header of each request."""
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            seen.append(self.headers["Host"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


def post(url):
    return webhooks.webhook_post(url, json={"type": "reminder"}, headers={}, timeout=(2, 2))


def test_a_name_that_turns_private_after_the_check_is_never_connected_to(monkeypatch):
    # DNS rebinding: the check sees a public address, a second lookup would see loopback. The name is looked up
    # once, and the connection goes to the checked address (refused here: no test leaves loopback).
    answers = iter([["93.184.215.14"], ["127.0.0.1"]])
    monkeypatch.setattr(
        webhooks,
        "getaddrinfo",
        lambda host, port: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in next(answers)],
    )
    connects = []

    def refused(sock, target):
        connects.append(target[:2])
        raise ConnectionRefusedError

    monkeypatch.setattr(socket.socket, "connect", refused)
    with loopback_receiver() as (port, seen):
        with pytest.raises(requests.ConnectionError):
            post(f"http://rebind.example.com:{port}/hook")
    assert seen == []
    assert connects == [("93.184.215.14", port)]


def test_https_connects_to_the_checked_address_and_verifies_the_certificate_for_the_name():
    """The pool's host is the address; SNI and the certificate check use the URL's name (requests' public
    build_connection_pool_key_attributes, urllib3's server_hostname and assert_hostname)."""
    adapter = webhooks.CheckedAdapter("2606:2800:21f:cb07:6820:80da:af6b:8b2c")
    request = requests.Request("POST", "https://hooks.example.com:8443/remind").prepare()
    host_params, pool_kwargs = adapter.build_connection_pool_key_attributes(request, True)
    assert host_params == {"scheme": "https", "host": "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]", "port": 8443}
    assert pool_kwargs["server_hostname"] == pool_kwargs["assert_hostname"] == "hooks.example.com"
    assert pool_kwargs["cert_reqs"] == "CERT_REQUIRED"


def test_the_next_checked_address_is_tried_when_one_takes_no_connection(settings, fake_dns):
    settings.REMINDERS_WEBHOOK_ALLOW_PRIVATE = True
    fake_dns["two.example.com"] = ["127.0.0.2", "127.0.0.1"]  # the receiver listens on 127.0.0.1 only
    with loopback_receiver() as (port, seen):
        assert post(f"http://two.example.com:{port}/hook").status_code == 204
    assert seen == [f"two.example.com:{port}"]


def test_loopback_literal_is_refused_before_any_connection():
    with loopback_receiver() as (port, seen):
        with pytest.raises(webhooks.WebhookTargetRefused):
            post(f"http://127.0.0.1:{port}/hook")
    assert seen == []


def test_the_connection_goes_to_the_checked_address_with_the_urls_name(settings, fake_dns):
    # Allowed for local development: proves the pinned connection really delivers (Host is still the name).
    settings.REMINDERS_WEBHOOK_ALLOW_PRIVATE = True
    fake_dns["receiver.example.com"] = ["127.0.0.1"]
    with loopback_receiver() as (port, seen):
        assert post(f"http://receiver.example.com:{port}/hook").status_code == 204
    assert seen == [f"receiver.example.com:{port}"]


# IPv6 addresses that stand for a refused IPv4 address (issue 24: NAT64 of 127.0.0.1 and ::127.0.0.1 were accepted
# and connected to).
EMBEDDED_REFUSED = [
    "64:ff9b::7f00:1",  # NAT64 (RFC 6052) of 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254, the cloud metadata address
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b:1::7f00:1",  # local-use NAT64 (RFC 8215)
    "64:ff9b:1:7f00:1::",  # local-use NAT64, the IPv4 address at /48
    "::127.0.0.1",  # IPv4-compatible
    "::10.0.0.1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:169.254.169.254",
    "::ffff:0:127.0.0.1",  # SIIT IPv4-translated
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
]


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "172.16.0.1",
        "192.168.0.1",
        "127.0.0.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "::",
        "fe80::1%eth0",
        "fc00::1",
        "ff02::1",
        "::ffff:10.0.0.1",
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        *EMBEDDED_REFUSED,
    ],
)
def test_non_public_addresses_are_not_allowed(address):
    assert not webhooks.address_allowed(address)


@pytest.mark.parametrize("address", EMBEDDED_REFUSED)
def test_an_ipv6_form_of_a_refused_ipv4_address_is_refused_before_any_connection(address, monkeypatch):
    connects = []
    real = socket.socket.connect

    def watching(sock, target):
        connects.append(target)
        return real(sock, target)

    monkeypatch.setattr(socket.socket, "connect", watching)
    with pytest.raises(webhooks.WebhookTargetRefused):
        webhooks.webhook_url_validate(f"http://[{address}]:8080/hook")
    with pytest.raises(webhooks.WebhookTargetRefused):
        post(f"http://[{address}]:8080/hook")
    assert connects == []


@pytest.mark.parametrize("address", ["64:ff9b::5db8:d70e", "2002:5db8:d70e::1", "64:ff9b::808:808"])
def test_an_ipv6_form_of_a_public_ipv4_address_is_allowed(address):
    assert webhooks.address_allowed(address)


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"])
def test_public_addresses_are_allowed(address):
    assert webhooks.address_allowed(address)


def test_allowing_private_targets_outside_debug_is_warned_about(settings):
    from reminders.checks import reminders_settings

    settings.DEBUG = False
    settings.REMINDERS_WEBHOOK_ALLOW_PRIVATE = True
    assert [m.id for m in reminders_settings()] == ["reminders.W001"]
    settings.REMINDERS_WEBHOOK_ALLOW_PRIVATE = False
    assert reminders_settings() == []
