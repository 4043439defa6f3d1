"""The ASGI router itself: lifespan states, and MCP without a lifespan is a clear 503."""

import json

import pytest
from asgiref.testing import ApplicationCommunicator

from mcpsite.routing import Application

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_lifespan_starts_and_stops_the_session_manager():
    app = Application()
    lifespan = ApplicationCommunicator(app, {"type": "lifespan"})
    await lifespan.send_input({"type": "lifespan.startup"})
    assert (await lifespan.receive_output(5))["type"] == "lifespan.startup.complete"
    assert app.mcp.running
    await lifespan.send_input({"type": "lifespan.shutdown"})
    assert (await lifespan.receive_output(5))["type"] == "lifespan.shutdown.complete"
    assert not app.mcp.running


async def test_mcp_request_without_lifespan_is_a_clear_503():
    app = Application()
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [], "query_string": b""}
    http = ApplicationCommunicator(app, scope)
    await http.send_input({"type": "http.request", "body": b"{}", "more_body": False})
    start = await http.receive_output(5)
    body = json.loads((await http.receive_output(5))["body"])
    assert start["status"] == 503
    assert "lifespan" in body["error"]["data"]


@pytest.mark.django_db
async def test_django_pages_run_the_middleware_chain_in_sync_mode_with_all_its_effects():
    """Django's part runs its (sync-capable) middlewares in sync mode: one hop into a worker thread per request,
    not one per middleware and phase (the ping-pong py-spy showed on `/rpc`, bench_cinema_booking). Every
    middleware still applies: the admin's login page keeps the security, clickjacking, CSP, language and CSRF
    effects."""
    import inspect

    from mcpsite.routing import django_app

    assert not inspect.iscoroutinefunction(django_app._middleware_chain)
    scope = {"type": "http", "method": "GET", "path": "/admin/login/", "headers": [(b"host", b"testserver")],
             "query_string": b"", "server": ("testserver", 80), "scheme": "http"}  # fmt: skip
    http = ApplicationCommunicator(Application(), scope)
    await http.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await http.receive_output(10)
    headers = {name.decode().lower(): value.decode() for name, value in start["headers"]}
    assert start["status"] == 200
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" in headers
    assert headers["content-language"]
    assert "csrftoken=" in headers["set-cookie"]
