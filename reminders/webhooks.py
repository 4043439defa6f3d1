"""Webhook targets: public internet hosts only.

A webhook URL is set by staff and POSTed to by the worker, so without a rule it would let the site reach what only
it can reach (loopback services, the private network, the cloud metadata address at 169.254.169.254). The URL is
checked when it is saved and again at every send: the host is resolved and refused if any of its addresses is not a
public one; then the connection is made to the address that was checked, not to a second lookup of the name, so a
DNS answer that changes between the check and the connect (DNS rebinding) cannot steer it elsewhere.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.utils.translation import gettext_noop
from requests.adapters import HTTPAdapter

from mcpsite.core.errors import Message

# One text for every refusal: saying "private" for one name and "does not resolve" for another would tell staff
# which internal names exist.
REFUSED = Message(
    gettext_noop(
        "Webhook URLs must point to a public internet host; this one is private, loopback, link-local or reserved, "
        "or its name does not resolve."
    )
)


class WebhookTargetRefused(Exception):
    """The webhook URL's host is, or resolves to, an address webhooks may not reach."""

    def __init__(self):
        super().__init__(REFUSED)


def getaddrinfo(host: str, port: int) -> list[tuple]:
    """The resolver (a seam for tests, which must not ask a real DNS server)."""
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)


# IPv6 ranges that carry an IPv4 address in their last 32 bits, which a translator or the host's own stack may
# reach: NAT64's well-known prefix (RFC 6052), the IPv4-compatible (deprecated, RFC 4291) and the SIIT-translated
# (RFC 2765) forms. IPv4-mapped (::ffff:0:0/96), 6to4 and Teredo are read by the ipaddress module itself.
_EMBEDDING_IPV4 = tuple(ipaddress.ip_network(n) for n in ("64:ff9b::/96", "::/96", "::ffff:0:0:0/96"))
# Local-use NAT64 (RFC 8215): a site's own translator, which may embed an IPv4 address at any prefix length.
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """Every IPv4 address `ip` stands for (to a translator, a tunnel or the local stack)."""
    embedded = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
    if any(ip in network for network in _EMBEDDING_IPV4):
        embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return [address for address in embedded if address is not None]


def address_allowed(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone (fe80::1%eth0) is link-local anyway
    if isinstance(ip, ipaddress.IPv6Address) and (
        ip in _LOCAL_NAT64 or not all(address_allowed(str(v4)) for v4 in _embedded_ipv4(ip))
    ):
        return False
    # is_global is False for private, loopback, link-local, shared (100.64/10), reserved and unspecified
    # addresses; multicast addresses can still be "global".
    return ip.is_global and not ip.is_multicast


def resolve_checked(host: str, port: int) -> list[tuple]:
    """getaddrinfo() results for host:port, all of them allowed targets; raises WebhookTargetRefused."""
    try:
        infos = getaddrinfo(host.strip("[]"), port)
    except (OSError, UnicodeError) as exc:
        raise WebhookTargetRefused() from exc
    if settings.REMINDERS_WEBHOOK_ALLOW_PRIVATE:
        return infos
    if not infos or not all(address_allowed(info[4][0]) for info in infos):
        raise WebhookTargetRefused()
    return infos


def webhook_url_validate(url: str) -> list[str]:
    """The addresses of `url`'s host; WebhookTargetRefused unless `url` is http(s) to a host whose every address is
    public."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise WebhookTargetRefused() from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookTargetRefused()
    return list(dict.fromkeys(info[4][0] for info in resolve_checked(parts.hostname, port)))


class CheckedAdapter(HTTPAdapter):
    """Connects to `address` (one that resolve_checked allowed) whatever the URL's host, through requests' public
    extension point for the connection pool's key: the pool's host is the address; TLS still verifies the
    certificate for the URL's host name and sends it as SNI (urllib3's server_hostname, assert_hostname)."""

    def __init__(self, address: str) -> None:
        self.address = f"[{address}]" if ":" in address else address
        super().__init__(max_retries=0)

    def build_connection_pool_key_attributes(self, request, verify, cert=None):
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(request, verify, cert)
        name = host_params["host"].strip("[]")
        if host_params["scheme"] == "https":
            pool_kwargs = {**pool_kwargs, "server_hostname": name, "assert_hostname": name}
        return {**host_params, "host": self.address}, pool_kwargs


def webhook_post(url: str, *, json: dict, headers: dict, timeout) -> requests.Response:
    """POST to a webhook; raises WebhookTargetRefused before any connection to a refused target.

    The name is resolved once, by the check; the connection goes to an address of that answer (the next one when
    a connection cannot be made), never to a second lookup, so DNS rebinding cannot steer it elsewhere."""
    addresses = webhook_url_validate(url)
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]  # the Host header: the URL's host and port, never its userinfo
    error: requests.ConnectionError | None = None
    for address in addresses:
        with requests.Session() as session:
            session.trust_env = False  # no proxy from the environment: the checked address is the one connected to
            session.mount("http://", CheckedAdapter(address))
            session.mount("https://", CheckedAdapter(address))
            try:
                return session.post(
                    url, json=json, headers={**headers, "Host": host}, timeout=timeout, allow_redirects=False
                )
            except requests.exceptions.SSLError:  # connected: the answer is this address's
                raise
            except requests.ConnectionError as exc:  # this address took no connection (or timed out): the next one
                error = exc
    assert error is not None
    raise error
