"""Protocol 2026-07-28 with the official Python client in its default mode (`mode="auto"`, which negotiates
2026-07-28 against us) on two uvicorn processes behind a proxy that alternates every request (a balancer without
affinity): a seat sold through one process reaches a listen stream held by the other, and an aborted resolve_points
stops its upstream requests on whichever process runs it. GaluchatAPI is faked on loopback at the HTTP layer."""

from __future__ import annotations

import json
import threading

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.subscriptions import ResourceUpdated

from geo.resolve import UPSTREAM_CONCURRENCY
from geo.tests.fake_galuchat import PATHS, answer_for

from .live import AlternatingProxy, LoopbackUpstream, live_site, loopback_upstream

pytestmark = pytest.mark.slow

SEATS = "mcpsite://cinema/schedules/{}/seats"
SETUP = """
import datetime
from django.utils import timezone
from cinema.models import Movie, Schedule, Theater
from cinema import services
theater = services.theater_set_layout(
    theater=Theater.objects.create(name="シアターL", rows=5, columns=5), rows=5, columns=5)
movie = Movie.objects.create(title="スタームービー", rating=4.5, duration=120)
Schedule.objects.create(movie=movie, theater=theater, public_id="live0",
                        date=timezone.localdate() + datetime.timedelta(days=1), start_time=datetime.time(18))
"""


class _Galuchat(LoopbackUpstream):
    """GaluchatAPI's contract on loopback, holding every request until `open` is set."""

    received: list = []
    held = threading.Semaphore(0)
    open = threading.Event()

    def do_POST(self):  # noqa: N802  (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        granularity = PATHS[self.path.split("?", 1)[0]]
        type(self).received.append(len(body["points"]))
        type(self).held.release()
        type(self).open.wait(30)
        self.reply(200, json.dumps(answer_for(granularity, [tuple(p) for p in body["points"]])).encode())


class _RoutedProxy(AlternatingProxy):
    """The alternating proxy, noting which backend got each JSON-RPC method."""

    def __init__(self, backends: list[str]):
        super().__init__(backends)
        self.routes: list[tuple[str, int]] = []

    async def app(self, scope, receive, send):
        from mcpsite.mcp.http import buffer_body

        body, receive = await buffer_body(receive, 10_000_000)
        try:
            method = json.loads(body).get("method", "")
        except (ValueError, AttributeError):
            method = ""
        self.routes.append((method, sum(self.sent) % len(self.backends)))
        await super().app(scope, receive, send)


@pytest.fixture(scope="module")
def galuchat():
    with loopback_upstream(_Galuchat) as url:
        yield url


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory, galuchat):
    with live_site(live_template, tmp_path_factory.mktemp("live-modern")) as live:
        live.shell(SETUP)
        env = {"GALUCHAT_BASE_URL": galuchat, "GALUCHAT_MAX_POINTS_PER_REQUEST": "1",
               "GALUCHAT_REQUESTS_PER_SECOND": "1000", "GALUCHAT_CACHE_TTL": "0",
               "MCP_AUDIT_FLUSH_SECONDS": "0"}  # fmt: skip
        live.start_server(**env)
        live.start_server(**env)
        yield live


def _client(url: str, http: httpx2.AsyncClient) -> Client:
    return Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="auto")


@pytest.mark.postgres  # one channel between processes: PostgreSQL's NOTIFY (Redis: test_redis.py)
def test_a_seat_sold_through_one_process_reaches_a_listen_stream_on_the_other(site):
    proxy = _RoutedProxy(site.urls[:2])

    async def scenario():
        headers = {"Authorization": f"Bearer {site.key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=None)) as http:
            async with _client(proxy_url, http) as client:
                version = client.session.protocol_version
                async with client.listen(resource_subscriptions=[SEATS.format("live0")]) as subscription:
                    holder = next(index for method, index in reversed(proxy.routes) if method == "subscriptions/listen")
                    # Sold through the process that does not hold the stream (directly, not through the proxy).
                    async with _client(site.urls[1 - holder], http) as seller:
                        sold = await seller.call_tool(
                            "reserve_seats",
                            {"schedule_id": "live0", "seats": ["A1"], "reservation_password": "secret12"},
                        )
                    with anyio.fail_after(30):  # a guard against hanging, not a speed assertion
                        event = await anext(aiter(subscription))
                    seats = json.loads((await client.read_resource(SEATS.format("live0"))).contents[0].text)
                return version, subscription.honored, sold, event, seats

    with proxy as proxy_url:
        version, honored, sold, event, seats = anyio.run(scenario)
    assert version == "2026-07-28"
    assert honored.resource_subscriptions == [SEATS.format("live0")]
    assert not sold.is_error
    assert event == ResourceUpdated(uri=SEATS.format("live0"))
    assert seats["reserved_count"] == 1


def _resolve_points_calls(site) -> int:
    return site.count("mcpsite_toolcall", tool="resolve_points")


def test_an_aborted_resolve_points_stops_its_upstream_requests(site):
    """12 points, one GaluchatAPI request each: the client aborts once every upstream worker is held, so only the
    requests already sent reach GaluchatAPI, counted once the call has ended on the server (its audit row). The
    control, not aborted, sends all 12."""
    proxy = _RoutedProxy(site.urls[:2])

    async def call(abort: bool) -> tuple[int, int]:
        _Galuchat.received.clear()
        _Galuchat.open.clear()
        calls_before = await anyio.to_thread.run_sync(_resolve_points_calls, site)
        points = [{"ref": f"p{i}", "lat": 35, "lon": 130 + i + (0.5 if abort else 0)} for i in range(12)]
        headers = {"Authorization": f"Bearer {site.key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http, _client(proxy_url, http) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "resolve_points", {"points": points})
                for _ in range(UPSTREAM_CONCURRENCY):  # every upstream worker's request is held at GaluchatAPI
                    assert await anyio.to_thread.run_sync(_Galuchat.held.acquire, True, 30)
                in_flight = len(_Galuchat.received)
                if abort:
                    tg.cancel_scope.cancel()  # closes the request's stream: 2026-07-28's cancellation
                    await anyio.sleep(2)  # the server hears the close and tells the tool (a margin, not a bound)
                _Galuchat.open.set()
        with anyio.fail_after(60):  # the call has ended on the server (audited): nothing more will be sent
            while await anyio.to_thread.run_sync(_resolve_points_calls, site) == calls_before:
                await anyio.sleep(0.2)
        while _Galuchat.held.acquire(blocking=False):
            pass
        return in_flight, len(_Galuchat.received)

    async def both():
        return await call(abort=True), await call(abort=False)

    with proxy as proxy_url:
        (aborted_in_flight, aborted_received), (_in_flight, control_received) = anyio.run(both)
    assert aborted_in_flight == UPSTREAM_CONCURRENCY < 12
    assert aborted_received == aborted_in_flight
    assert control_received == 12
