"""The REDIS_URL path with a real redis-server on loopback (make test installs it).

Rate limits counted by django-redis are exact, and two uvicorn processes share one limit.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import time

import httpx2
import pytest
from django.core.cache import caches
from django.test import override_settings

from mcpsite.core import limits
from mcpsite.core.limits import over_limit
from mcpsite.settings import _redis_cache

from .concurrency import run_together
from .live import free_port, live_site


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (make test installs it: apt-get install redis-server)")
    port = free_port()
    workdir = tmp_path_factory.mktemp("redis")
    password = "redis-test-password"
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(workdir), "--requirepass", password],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://:{password}@127.0.0.1:{port}/0"
    import redis

    client = redis.Redis.from_url(url)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def redis_limits(redis_url):
    """The rate limiter counts in Redis (what REDIS_URL sets up), from empty."""
    with override_settings(CACHES={"default": _redis_cache(redis_url)}):
        assert type(caches["default"]).__name__ == "RedisCache"
        caches["default"].clear()
        assert isinstance(limits.limiter.store(), limits.RedisStore)
        yield


def test_rate_limit_counts_exactly_in_redis(redis_limits):
    hits = [over_limit(group="t", key="k", rate="10/m") for _ in range(12)]
    assert hits == [False] * 10 + [True, True]


def test_redis_admits_at_most_the_rate_in_any_window_and_says_how_long_to_wait(redis_limits, rate_clock):
    start, admitted = rate_clock.now, []
    for i in range(200):
        rate_clock.now = start + i * 51 / 199
        if not over_limit(group="t", key="spread", rate="100/m"):
            admitted.append(rate_clock.now)
    assert len(admitted) == 100 and admitted[-1] - admitted[0] < 60
    assert limits.retry_after(group="t", key="spread", rate="100/m") == math.ceil(admitted[0] + 60 - rate_clock.now)
    rate_clock.now = admitted[0] + 60
    assert limits.retry_after(group="t", key="spread", rate="100/m") is None
    assert [over_limit(group="t", key="spread", rate="100/m") for _ in range(2)] == [False, True]


def test_redis_gives_back_a_slot(redis_limits, rate_clock):
    throttle = {"group": "t", "key": "give", "rate": "2/15m"}
    assert [over_limit(**throttle) for _ in range(2)] == [False, False]
    limits.give_back(**throttle)
    assert [over_limit(**throttle) for _ in range(2)] == [False, True]


def test_concurrent_takes_in_redis_admit_exactly_the_rate(redis_limits):
    def take(_n):
        return sum(not over_limit(group="t", key="race", rate="50/m") for _ in range(15))

    admitted, errors = run_together(take, 8)
    assert errors == [] and sum(admitted) == 50


def test_two_server_processes_share_a_limit_through_redis(redis_url, live_template, tmp_path):
    with live_site(live_template, tmp_path) as site:
        site.env["REDIS_URL"] = redis_url
        first, second = site.start_server(), site.start_server()
        key, pk = site.create_api_key("redis-limited", "--rate", "6/m")
        codes = []
        for i in range(8):
            response = httpx2.post(
                f"{(first, second)[i % 2]}/rpc",
                json={"jsonrpc": "2.0", "id": i, "method": "tools/list"},
                headers={"Authorization": f"Bearer {key}"},
            )
            codes.append(response.status_code)
        health = httpx2.get(f"{first}/healthz").json()
    assert codes == [200] * 6 + [429, 429]
    assert health == {"status": "ok", "checks": {"database": "ok", "cache": "ok"}}


def test_listen_events_travel_through_redis_pub_sub(redis_url):
    """With REDIS_URL, resource updates and list changes go through Redis pub/sub: what any process PUBLISHes on the
    channel (here another client, as another process would) reaches this process's listen streams, and so does
    this process's own publish."""
    import anyio
    import redis

    from mcpsite.mcp import subscriptions
    from mcpsite.mcp.subscriptions import ResourceUpdated, ToolsListChanged

    heard: list = []

    async def scenario():
        unsubscribe = subscriptions.bus.subscribe(heard.append)
        try:
            await anyio.to_thread.run_sync(subscriptions.listener.ensure_started)
            assert subscriptions.listener.listening.is_set()
            redis.Redis.from_url(redis_url).publish(subscriptions.CHANNEL, "mcpsite://cinema/schedules/s001/seats")
            await subscriptions.bus.publish(ToolsListChanged())
            with anyio.fail_after(10):  # a guard against hanging, not a speed assertion
                while len(heard) < 2:
                    await anyio.sleep(0.02)
        finally:
            unsubscribe()

    with override_settings(CACHES={"default": _redis_cache(redis_url)}):
        assert subscriptions.channel_kind() == "redis"
        try:
            anyio.run(scenario)
        finally:
            subscriptions.listener.stop()
    assert heard == [ResourceUpdated(uri="mcpsite://cinema/schedules/s001/seats"), ToolsListChanged()]
