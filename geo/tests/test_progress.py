"""resolve_points through the official client: notifications/progress per GaluchatAPI request (with the total),
and notifications/cancelled stops further GaluchatAPI requests; on 2026-07-28 over HTTP, progress on the call's own
stream and closing that stream stops them. GaluchatAPI is faked at the HTTP layer."""

from __future__ import annotations

import threading

import anyio
import pytest

from geo.resolve import UPSTREAM_CONCURRENCY
from mcpsite.mcp import calls, threads
from mcpsite.models import ToolCall
from mcpsite.tests.modern import Exchange, envelope
from mcpsite.tests.test_serving import running_site

pytestmark = pytest.mark.django_db(transaction=True)


async def the_call_audited():
    """Wait until the call's thread has ended and written its audit row, which it does whether or not anyone still
    waits for the call (read in a worker thread that gives its database connection back)."""
    audited = threads.in_worker_thread(ToolCall.objects.filter(tool="resolve_points").exists)
    with anyio.fail_after(30):  # a guard against hanging, not a speed assertion
        while not await audited():
            await anyio.sleep(0.05)


def points(n: int) -> list[dict]:
    return [{"ref": f"p{i}", "lat": 35, "lon": 130 + i} for i in range(n)]


def test_progress_is_reported_per_upstream_request_with_the_total(mcp_run, fake_galuchat, settings):
    settings.GALUCHAT_MAX_POINTS_PER_REQUEST = 2
    reports = []

    async def on_progress(progress, total, message):
        reports.append((progress, total, message))

    async def scenario(client):
        return await client.call_tool("resolve_points", {"points": points(5)}, progress_callback=on_progress)

    result = mcp_run(scenario)
    assert not result.is_error and len(result.structured_content["results"]) == 5
    assert len(fake_galuchat.received) == 3
    assert reports == [(1, 3, "GaluchatAPI 1/3"), (2, 3, "GaluchatAPI 2/3"), (3, 3, "GaluchatAPI 3/3")]


def test_without_a_progress_token_nothing_is_reported_and_the_result_is_the_same(mcp_run, fake_galuchat, settings):
    settings.GALUCHAT_MAX_POINTS_PER_REQUEST = 2

    async def scenario(client):
        return await client.call_tool("resolve_points", {"points": points(5)})

    assert len(mcp_run(scenario).structured_content["results"]) == 5


def _cancel_while_upstream_is_busy(mcp_run, fake_galuchat, settings, monkeypatch, *, cancel: bool) -> int:
    """resolve_points of 12 points, one per request; the first requests are held at GaluchatAPI until the client has
    cancelled (or not), then let go. Returns how many requests were held when the client cancelled and how many
    GaluchatAPI received in all.

    The client cancels only once every upstream worker is held at GaluchatAPI: a worker that has already decided to
    send (it checked for cancellation just before) but whose request has not arrived yet would otherwise be counted
    after the cancel, and that send is not a failure to stop."""
    settings.GALUCHAT_MAX_POINTS_PER_REQUEST = 1
    settings.GALUCHAT_REQUESTS_PER_SECOND = 1000
    release = threading.Event()
    all_held = threading.Semaphore(0)

    def hold(sent):
        all_held.release()
        release.wait(30)
        return False  # not a fault: answer normally

    fake_galuchat.fail_when = hold
    # Seen by the server: the call was cancelled (calls.SessionInteraction.cancel is what tells the tool).
    server_cancelled = threading.Event()
    original_cancel = calls.SessionInteraction.cancel

    def cancel_and_tell(self):
        original_cancel(self)
        server_cancelled.set()

    monkeypatch.setattr(calls.SessionInteraction, "cancel", cancel_and_tell)

    async def scenario(client):
        async with anyio.create_task_group() as tg:

            async def call():
                with anyio.CancelScope() as scope:
                    running.append(scope)
                    await client.call_tool("resolve_points", {"points": points(12)})

            running: list = []
            tg.start_soon(call)
            for _ in range(UPSTREAM_CONCURRENCY):  # every worker's request is held at GaluchatAPI
                assert await anyio.to_thread.run_sync(all_held.acquire, True, 30)
            if cancel:
                running[0].cancel()  # the client sends notifications/cancelled
                assert await anyio.to_thread.run_sync(server_cancelled.wait, 30)
            in_flight = len(fake_galuchat.received)
            release.set()
        await the_call_audited()
        return in_flight

    in_flight = mcp_run(scenario)
    return in_flight, len(fake_galuchat.received)


def test_cancellation_stops_further_upstream_requests(mcp_run, fake_galuchat, settings, monkeypatch):
    in_flight, received = _cancel_while_upstream_is_busy(mcp_run, fake_galuchat, settings, monkeypatch, cancel=True)
    assert in_flight == UPSTREAM_CONCURRENCY < 12
    assert received == in_flight  # only the requests already sent when the client cancelled


def test_control_without_cancellation_every_request_is_sent(mcp_run, fake_galuchat, settings, monkeypatch):
    """The control: the same call, not cancelled, sends all 12 requests (so the test above measures the cancel)."""
    in_flight, received = _cancel_while_upstream_is_busy(mcp_run, fake_galuchat, settings, monkeypatch, cancel=False)
    assert received == 12 and in_flight == UPSTREAM_CONCURRENCY


# --- protocol 2026-07-28 over HTTP, in the default configuration: no session ----------------------------------


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _resolve_call(n: int) -> dict:
    return envelope(1, "tools/call", {"name": "resolve_points", "arguments": {"points": points(n)},
                                      "_meta": {"progressToken": "geo"}})  # fmt: skip


@pytest.mark.anyio
async def test_progress_arrives_on_the_calls_own_stream(fake_galuchat, settings, api_key):
    """2026-07-28 has no session: the progress of a call goes on its own response, which turns into an SSE stream
    when the first notification is sent; the result ends the stream."""
    settings.GALUCHAT_MAX_POINTS_PER_REQUEST = 2
    _key, raw = api_key
    async with running_site() as app:
        call = await Exchange(app, raw, _resolve_call(5)).start()
        messages = [await call.next_message() for _ in range(4)]
    assert call.is_sse
    assert [m["params"] for m in messages[:3]] == [
        {"progressToken": "geo", "progress": i, "total": 3, "message": f"GaluchatAPI {i}/3"} for i in (1, 2, 3)
    ]
    assert len(messages[3]["result"]["structuredContent"]["results"]) == 5


async def _abort_while_upstream_is_busy(fake_galuchat, settings, monkeypatch, raw: str, *, abort: bool):
    """`_cancel_while_upstream_is_busy` for 2026-07-28, where cancelling is closing the request's stream."""
    settings.GALUCHAT_MAX_POINTS_PER_REQUEST = 1
    settings.GALUCHAT_REQUESTS_PER_SECOND = 1000
    release, all_held, server_cancelled = threading.Event(), threading.Semaphore(0), threading.Event()

    def hold(sent):
        all_held.release()
        release.wait(30)
        return False

    fake_galuchat.fail_when = hold
    original_cancel = calls.SessionInteraction.cancel

    def cancel_and_tell(self):
        original_cancel(self)
        server_cancelled.set()

    monkeypatch.setattr(calls.SessionInteraction, "cancel", cancel_and_tell)
    async with running_site() as app:
        call = await Exchange(app, raw, _resolve_call(12)).start()
        for _ in range(UPSTREAM_CONCURRENCY):
            assert await anyio.to_thread.run_sync(all_held.acquire, True, 30)
        if abort:
            await call.disconnect()
            assert await anyio.to_thread.run_sync(server_cancelled.wait, 30)
        in_flight = len(fake_galuchat.received)
        release.set()
        if not abort:
            await call.body()
        await the_call_audited()
    return in_flight, len(fake_galuchat.received)


@pytest.mark.anyio
async def test_closing_the_stream_stops_further_upstream_requests(fake_galuchat, settings, monkeypatch, api_key):
    in_flight, received = await _abort_while_upstream_is_busy(fake_galuchat, settings, monkeypatch, api_key[1],
                                                              abort=True)  # fmt: skip
    assert in_flight == UPSTREAM_CONCURRENCY < 12
    assert received == in_flight


@pytest.mark.anyio
async def test_control_a_stream_left_open_sends_every_request(fake_galuchat, settings, monkeypatch, api_key):
    in_flight, received = await _abort_while_upstream_is_busy(fake_galuchat, settings, monkeypatch, api_key[1],
                                                              abort=False)  # fmt: skip
    assert received == 12 and in_flight == UPSTREAM_CONCURRENCY
