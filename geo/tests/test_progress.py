"""resolve_points through the official client: notifications/progress per GaluchatAPI request (with the total),
and notifications/cancelled stops further GaluchatAPI requests. GaluchatAPI is faked at the HTTP layer."""

from __future__ import annotations

import threading

import anyio
import pytest

from geo.resolve import UPSTREAM_CONCURRENCY
from mcpsite.mcp import calls
from mcpsite.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)


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
        # The call's thread ends (and is audited) whether or not anyone still waits for it.
        with anyio.fail_after(30):  # a guard against hanging, not a speed assertion
            while not await anyio.to_thread.run_sync(ToolCall.objects.filter(tool="resolve_points").exists):
                await anyio.sleep(0.05)
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
