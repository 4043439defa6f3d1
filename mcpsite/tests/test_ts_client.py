"""The official TypeScript SDK v2 client (`@modelcontextprotocol/client`, tsclient.py) against two uvicorn processes
on PostgreSQL behind a proxy that alternates every request (as a balancer without affinity), on protocol 2026-07-28:
tools, and message.send's confirmation (decline, accept, replay, forged state).

One site and one pair of servers serve the module; each test drives one case of ts/client.mjs through the proxy.
"""

from __future__ import annotations

import json

import pytest

from .live import live_site
from .test_interop_confirmation import SENT, STATE_REFUSED
from .test_interop_confirmation import SETUP as CONTACT_SETUP
from .test_serving import AlternatingProxy
from .tsclient import ts_client

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

TO = "山田花子"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with live_site(tmp_path_factory.mktemp("ts-client")) as site:
        site.manage("shell", "-v", "0", "-c", CONTACT_SETUP)
        site.start_server()
        site.start_server()
        yield site


@pytest.fixture(scope="module")
def proxy(site):
    """The proxy in front of the two server processes; yields (the proxy, its /mcp URL)."""
    balancer = AlternatingProxy(site.urls[:2])
    with balancer as url:
        yield balancer, f"{url}/mcp"


def sent(site) -> dict[str, str]:
    """The messages stored: text -> public id."""
    return dict(json.loads(site.manage("shell", "-v", "0", "-c", SENT)))


def test_tools_list_and_call_on_2026_07_28_across_two_processes(site, proxy):
    balancer, url = proxy
    before = list(balancer.sent)
    result = ts_client("list_and_call", url, site.key, name="test_echo", arguments={"text": "映画", "count": 2})
    assert result["protocolVersion"] == "2026-07-28"
    assert {"get_seat_availability", "message.send", "resolve_points", "test_echo"} <= set(result["tools"])
    assert result["result"]["structuredContent"] == {"echo": "映画映画", "transport": "http"}
    assert result["result"]["isError"] is False
    # discover, tools/list and tools/call went through the proxy, to both processes
    assert all(after > earlier for after, earlier in zip(balancer.sent, before, strict=True))


def test_message_send_declined_sends_nothing_and_accepted_sends_once(site, proxy):
    _balancer, url = proxy
    declined = ts_client("call_answering", url, site.key, name="message.send", answer="decline",
                         arguments={"to": TO, "text": "ts decline"})  # fmt: skip
    accepted = ts_client("call_answering", url, site.key, name="message.send", answer="accept",
                         arguments={"to": TO, "text": "ts accept"})  # fmt: skip
    assert declined["isError"] is True and "declined" in declined["structuredContent"]["error"]
    assert accepted["structuredContent"]["status"] == "ok"
    stored = sent(site)
    assert "ts decline" not in stored and stored["ts accept"] == accepted["structuredContent"]["id"]


def test_message_send_replayed_sends_once_and_a_forged_state_is_refused(site, proxy):
    _balancer, url = proxy
    twice = ts_client("accept_twice", url, site.key, name="message.send", arguments={"to": TO, "text": "ts replay"})
    forged = ts_client("forged_state", url, site.key, name="message.send", arguments={"to": TO, "text": "ts forged"})
    first, second = twice["first"]["result"], twice["second"]["result"]
    assert first["structuredContent"]["status"] == "ok"
    assert second["structuredContent"]["id"] == first["structuredContent"]["id"]
    assert forged["error"]["code"] == -32602 and STATE_REFUSED in forged["error"]["message"]
    stored = sent(site)
    assert stored["ts replay"] == first["structuredContent"]["id"] and "ts forged" not in stored
