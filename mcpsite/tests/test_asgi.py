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


async def _get(app, path: str) -> dict:
    scope = {"type": "http", "method": "GET", "path": path, "headers": [(b"host", b"testserver")],
             "query_string": b"", "server": ("testserver", 80), "scheme": "http"}  # fmt: skip
    http = ApplicationCommunicator(app, scope)
    await http.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await http.receive_output(10)
    await http.receive_output(10)  # the body
    await http.wait(10)  # the request's handling has ended
    return start


@pytest.mark.django_db
async def test_django_requests_reuse_their_threads(monkeypatch):
    """Django's pages run on a bounded pool of request threads: the threads started do not grow with the requests."""
    import threading

    from mcpsite.django_asgi import DjangoASGI

    app = DjangoASGI(threads=2)
    started = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda thread: (started.append(thread.name), real_start(thread)))
    for _ in range(10):
        assert (await _get(app, "/admin/login/"))["status"] == 200
    assert 1 <= len(started) <= 2


@pytest.mark.django_db
async def test_django_pages_run_the_middleware_chain_with_all_its_effects():
    """Django's part runs through its WSGI handler (mcpsite/django_asgi.py): every middleware still applies, so the
    admin's login page keeps the security, clickjacking, CSP, language and CSRF effects."""
    start = await _get(Application(), "/admin/login/")
    headers = {name.decode().lower(): value.decode() for name, value in start["headers"]}
    assert start["status"] == 200
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" in headers
    assert headers["content-language"]
    assert "csrftoken=" in headers["set-cookie"]
