"""An unknown tool gets the same answer on every transport that has `tools/call`, as docs/decisions/0002-errors.md
tabulates it: -32602 (MCP: an unknown tool in `tools/call` is invalid params); a tool's name used as the method
where a transport has no such method is -32601 (JSON-RPC: method not found)."""

from __future__ import annotations

import pytest

from .transports import Transports, message

pytestmark = pytest.mark.django_db(transaction=True)  # MCP transports run the dispatcher in worker threads


def tools_call(name: str) -> dict:
    return message("tools/call", {"name": name, "arguments": {"text": "a"}})


def as_method(name: str) -> dict:
    return message(name, {"text": "a"})


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


@pytest.mark.parametrize(("transport", "where", "sent", "status", "code"), CASES)
def test_an_unknown_tool_gets_the_tables_answer(api_key, http_post, transport, where, sent, status, code):
    got_status, answer = getattr(Transports(api_key[1], http_post), transport)(where, sent)
    assert (got_status, answer["error"]["code"]) == (status, code), answer
    assert "result" not in answer
