"""Concurrent calls share one process-wide GaluchatAPI rate limit (published: 10 requests/second)."""

import pytest

from geo import galuchat
from mcpsite.mcp import dispatch
from mcpsite.mcp.registry import CallContext
from mcpsite.tests.concurrency import run_together

THREADS = 6
POINTS_PER_CALL = 4


def max_starts_in_one_second(times):
    times = sorted(times)
    return max(sum(1 for t in times if start <= t < start + 1.0) for start in times)


def run_concurrently(api_key):
    key, _raw = api_key

    def call(n):
        ctx = CallContext(transport="test", request_id=f"c{n}", api_key=key, owner=key.owner)
        points = [{"ref": f"{n}-{i}", "lat": 30 + n, "lon": 130 + i} for i in range(POINTS_PER_CALL)]
        return dispatch.call_tool(ctx, "resolve_points", {"points": points}).data

    outcomes, errors = run_together(call, THREADS)
    assert errors == []
    return outcomes


@pytest.fixture
def starts(monkeypatch):
    """When the limiter let each upstream request start (the start times it granted: its own guarantee)."""
    times = []
    acquire = galuchat.rate_limiter.acquire

    def recording(rate):
        granted = acquire(rate)
        times.append(granted)
        return granted

    monkeypatch.setattr(galuchat.rate_limiter, "acquire", recording)
    return times


@pytest.fixture
def one_point_per_request(settings):
    # Every point is its own upstream request: 24 requests from 6 simultaneous calls.
    settings.GALUCHAT_MAX_POINTS_PER_REQUEST = 1
    settings.GALUCHAT_REQUESTS_PER_SECOND = 10


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_calls_never_exceed_the_upstream_rate(api_key, fake_galuchat, one_point_per_request, starts):
    outcomes = run_concurrently(api_key)
    assert len(outcomes) == THREADS and all(len(o["results"]) == POINTS_PER_CALL for o in outcomes)
    assert len(starts) == len(fake_galuchat.received) == THREADS * POINTS_PER_CALL
    assert max_starts_in_one_second(starts) <= 10
    # What the upstream saw: arrivals, with the limiter's margin absorbing the jitter.
    assert max_starts_in_one_second([r.at for r in fake_galuchat.received]) <= 10


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_control_without_the_limiter_the_burst_exceeds_the_rate(
    api_key, fake_galuchat, one_point_per_request, monkeypatch
):
    monkeypatch.setattr(galuchat.rate_limiter, "acquire", lambda rate: None)
    run_concurrently(api_key)
    assert len(fake_galuchat.received) == THREADS * POINTS_PER_CALL
    assert max_starts_in_one_second([r.at for r in fake_galuchat.received]) > 10
