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
