"""The official TypeScript SDK v2 client (`@modelcontextprotocol/client`, tsclient.py) against two uvicorn processes
on PostgreSQL behind a proxy that alternates every request (as a balancer without affinity), on protocol 2026-07-28.

One site and one pair of servers serve the module; each test drives one case of ts/client.mjs through the proxy.
"""

from __future__ import annotations

import pytest

from .live import live_site
from .test_serving import AlternatingProxy
from .tsclient import ts_client

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with live_site(tmp_path_factory.mktemp("ts-client")) as site:
        yield site


@pytest.fixture(scope="module")
def proxy(site):
    """The proxy in front of two server processes; yields (proxy object, its /mcp URL)."""
    proxy = AlternatingProxy([site.start_server(), site.start_server()])
    with proxy as url:
        yield proxy, f"{url}/mcp"


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
