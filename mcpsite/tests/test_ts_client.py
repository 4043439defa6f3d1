"""The official TypeScript SDK v2 client (`@modelcontextprotocol/client`, tsclient.py) against two uvicorn processes
on PostgreSQL behind a proxy that alternates every request (as a balancer without affinity), on protocol 2026-07-28:
tools, message.send's confirmation (decline, accept, replay, forged state), a seat map's listen stream, and an
aborted resolve_points. GaluchatAPI is faked on loopback at the HTTP layer.

One site and one pair of servers serve the module; each test drives one case of ts/client.mjs through the proxy.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from geo.resolve import UPSTREAM_CONCURRENCY

from .live import live_site, loopback_upstream
from .test_interop_confirmation import SENT, STATE_REFUSED
from .test_interop_confirmation import SETUP as CONTACT_SETUP
from .test_modern_live import SEATS, _Galuchat, _resolve_points_calls, _RoutedProxy
from .test_modern_live import SETUP as SHOW_SETUP
from .tsclient import SCRIPT, TsClient, ts_client

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

TO = "山田花子"
# The servers' settings: one point per GaluchatAPI request, none cached, the audit written at once.
SERVER_ENV = {"GALUCHAT_MAX_POINTS_PER_REQUEST": "1", "GALUCHAT_REQUESTS_PER_SECOND": "1000",
              "GALUCHAT_CACHE_TTL": "0", "MCP_AUDIT_FLUSH_SECONDS": "0"}  # fmt: skip


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    directory = tmp_path_factory.mktemp("ts-client")
    with loopback_upstream(_Galuchat) as galuchat, live_site(live_template, directory) as site:
        site.shell(CONTACT_SETUP + SHOW_SETUP)
        env = {"GALUCHAT_BASE_URL": galuchat, **SERVER_ENV}
        site.start_server(**env)
        site.start_server(**env)
        yield site


@pytest.fixture(scope="module")
def proxy(site):
    """The proxy in front of the two server processes (noting where each method went); yields (the proxy, its /mcp
    URL)."""
    balancer = _RoutedProxy(site.urls[:2])
    with balancer as url:
        yield balancer, f"{url}/mcp"


def sent(site) -> dict[str, str]:
    """The messages stored: text -> public id."""
    return dict(json.loads(site.shell(SENT)))


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


async def _sell(url: str, key: str) -> dict:
    """Seat A2 of the show, sold with the official Python client straight at one process (not via the proxy)."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="auto") as seller:
            sold = await seller.call_tool(
                "reserve_seats", {"schedule_id": "live0", "seats": ["A2"], "reservation_password": "secret12"}
            )
    return sold.structured_content


def test_a_seat_sold_through_one_process_reaches_a_listen_stream_on_the_other(site, proxy):
    balancer, url = proxy
    uri = SEATS.format("live0")
    with TsClient("listen", url, site.key, uri=uri, updates=1) as listener:
        listening = listener.event()
        holder = next(index for method, index in reversed(balancer.routes) if method == "subscriptions/listen")
        sold = anyio.run(_sell, site.urls[1 - holder], site.key)
        updated = listener.event()
        result = listener.result()
    assert listening["honored"]["resourceSubscriptions"] == [uri]
    assert sold["status"] == "confirmed" and sold["reserved_seats"] == ["A2"]
    assert updated == {"event": "updated", "uri": uri}
    assert result == {"updates": 1}


def abort_resolve_points(site, url: str, abort: bool, script: Path = SCRIPT) -> tuple[int, dict]:
    """12 points, one GaluchatAPI request each, called by `script`'s abortable_call case: the client aborts (or, as
    a control, lets the call finish) once every upstream worker's request is held. Returns the requests held then and
    the client's result, once the call has ended on the server (its audit row): nothing more will be sent."""
    _Galuchat.received.clear()
    _Galuchat.open.clear()
    calls_before = _resolve_points_calls(site)
    points = [{"ref": f"t{i}", "lat": 34, "lon": 130 + i + (0.25 if abort else 0.75)} for i in range(12)]
    arguments = {"points": points}
    with TsClient("abortable_call", url, site.key, script, name="resolve_points", arguments=arguments) as caller:
        assert caller.event() == {"event": "calling"}
        for _ in range(UPSTREAM_CONCURRENCY):
            assert _Galuchat.held.acquire(True, 30)
        in_flight = len(_Galuchat.received)
        if abort:
            caller.tell("abort")
            anyio.run(anyio.sleep, 2)  # the server hears of it and tells the tool (a margin, not a bound)
        else:
            caller.tell("finish")
        _Galuchat.open.set()
        result = caller.result()
    for _ in range(300):  # the call has ended on the server (audited): nothing more will be sent
        if _resolve_points_calls(site) > calls_before:
            break
        anyio.run(anyio.sleep, 0.2)
    while _Galuchat.held.acquire(blocking=False):
        pass
    return in_flight, result


@pytest.mark.parametrize("abort", [True, False], ids=["aborted", "control"])
def test_an_aborted_resolve_points_stops_its_upstream_requests(site, proxy, abort):
    """The client aborts once every upstream worker's request is held, so only those reach GaluchatAPI. The control,
    not aborted, sends all 12."""
    _balancer, url = proxy
    in_flight, result = abort_resolve_points(site, url, abort)
    assert in_flight == UPSTREAM_CONCURRENCY < 12
    assert result["aborted"] is abort
    assert len(_Galuchat.received) == (in_flight if abort else 12)
