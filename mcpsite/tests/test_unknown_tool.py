"""An unknown tool gets the same answer on every transport that has `tools/call`, as docs/decisions/0002-errors.md
tabulates it: -32602 (MCP: an unknown tool in `tools/call` is invalid params); a tool's name used as the method
where a transport has no such method is -32601 (JSON-RPC: method not found)."""

from __future__ import annotations

import io
import json

import anyio
import pytest

from mcpsite.mcp.stdio import serve_stdio
from reminders.tests.ws_client import exchange

from .test_serving import request as mcp_request
from .test_serving import running_site

pytestmark = pytest.mark.django_db(transaction=True)  # MCP transports run the dispatcher in worker threads

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def _message(method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": 7, "method": method, **({"params": params} if params is not None else {})}


def tools_call(name: str) -> dict:
    return _message("tools/call", {"name": name, "arguments": {"text": "a"}})


def as_method(name: str) -> dict:
    return _message(name, {"text": "a"})


class Transports:
    """Send one message over a transport as `raw_key`; each answers (HTTP status, the JSON-RPC answer or REST body)."""

    def __init__(self, raw_key: str, http_post) -> None:
        self.raw_key, self.http_post = raw_key, http_post

    def mcp(self, path: str, message: dict, version: str | None = None) -> tuple[int, dict]:
        """POST to the Streamable HTTP app at `path`; at `version`'s protocol (header and `_meta`) if given."""
        headers: list[tuple[bytes, bytes]] = []
        if version is not None:
            message = {**message, "params": {**message["params"], "_meta": META}}
            headers = [(b"mcp-protocol-version", version.encode()), (b"mcp-method", message["method"].encode())]
            if "name" in message["params"]:
                headers.append((b"mcp-name", message["params"]["name"].encode()))

        async def run():
            async with running_site() as app:
                return await mcp_request(app, self.raw_key, message, headers=headers, path=path)

        status, _headers, body = anyio.run(run)
        return status, json.loads(body)

    def mcp_2026(self, path: str, message: dict) -> tuple[int, dict]:
        return self.mcp(path, message, MODERN)

    def stdio(self, group: str | None, message: dict) -> tuple[int, dict]:
        """The real stdio transport (serve_stdio) on in-memory text files; stdio has no status: 200."""
        output = io.StringIO()
        serve_stdio(groups=[group] if group else None, stdin=io.StringIO(json.dumps(message) + "\n"), stdout=output)
        (line,) = output.getvalue().splitlines()
        return 200, json.loads(line)

    def ws(self, _path: None, message: dict) -> tuple[int, dict]:
        (answer,), _closed = exchange(self.raw_key, [message])
        return 101, answer

    def http(self, path: str, message: dict) -> tuple[int, dict]:
        response = self.http_post(path, message)
        return response.status_code, response.json()


# The table in docs/decisions/0002-errors.md: transport, where, what is sent -> HTTP status, JSON-RPC code.
CASES = [
    ("mcp", "/mcp", tools_call("no_such_tool"), 200, -32602),
    ("mcp", "/mcp/reminders", tools_call("test_echo"), 200, -32602),  # a tool of another group
    ("mcp_2026", "/mcp", tools_call("no_such_tool"), 400, -32602),  # 2026-07-28 maps error codes to statuses
    ("mcp_2026", "/mcp", as_method("test_echo"), 404, -32601),
    ("mcp", "/mcp", as_method("test_echo"), 200, -32601),
    ("stdio", None, tools_call("no_such_tool"), 200, -32602),
    ("stdio", "reminders", tools_call("test_echo"), 200, -32602),
    ("stdio", None, as_method("test_echo"), 200, -32601),
    ("ws", None, tools_call("no_such_tool"), 101, -32602),
    ("ws", None, as_method("test_echo"), 101, -32601),  # the WebSocket has no tool-name methods
    ("http", "/rpc", tools_call("no_such_tool"), 200, -32602),
    ("http", "/rpc", as_method("no_such_tool"), 200, -32601),
    ("http", "/mcp/tools/call", {"name": "no_such_tool"}, 404, -32602),
    ("http", "/mcp/reminders/tools/call", {"name": "test_echo"}, 404, -32602),
]


@pytest.mark.parametrize(("transport", "where", "message", "status", "code"), CASES)
def test_an_unknown_tool_gets_the_tables_answer(api_key, http_post, transport, where, message, status, code):
    got_status, answer = getattr(Transports(api_key[1], http_post), transport)(where, message)
    assert (got_status, answer["error"]["code"]) == (status, code), answer
    assert "result" not in answer
