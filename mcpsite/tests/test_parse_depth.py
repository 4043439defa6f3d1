"""Deeply nested JSON is a parse error (-32700) on every transport, never a 500 page or a dropped socket."""

import json
import logging

import pytest

from reminders.tests.ws_client import exchange_raw

pytestmark = pytest.mark.django_db

DEEP = [
    "[" * 100_000,  # issue #17: an HTML 500 and a RecursionError traceback
    '{"a":' * 100_000,
    '{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":' + "[" * 100_000 + "]" * 100_000 + "}}",
]


@pytest.mark.parametrize("body", DEEP)
def test_rpc_answers_deep_nesting_with_a_parse_error(rpc, body):
    response = rpc.post(body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


@pytest.mark.parametrize("body", DEEP)
def test_rest_answers_deep_nesting_with_a_parse_error(http_post, body):
    response = http_post("/mcp/tools/call", body)
    assert response.status_code == 400
    assert set(response.json()) == {"error"} and response.json()["error"]["code"] == -32700


@pytest.mark.django_db(transaction=True)  # the socket authenticates in a worker thread
@pytest.mark.parametrize("text", DEEP)
def test_websocket_answers_deep_nesting_and_stays_open(api_key, text):
    _key, raw = api_key
    answers, closed = exchange_raw(raw, [text, '{"jsonrpc":"2.0","id":2,"method":"ping"}'])
    assert answers[0]["error"]["code"] == -32700
    assert answers[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert closed is None


def _nested_params(method: str, depth: int) -> str:
    """A `method` request whose params hold `depth` nested arrays."""
    inner = "[" * depth + "]" * depth
    params = {"tools/call": f'{{"name":"test_echo","arguments":{{"text":{inner}}}}}', "initialize": f'{{"x":{inner}}}'}
    return f'{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params[method]}}}'


MCP_DEEP = [*DEEP, _nested_params("tools/call", 5_000), _nested_params("initialize", 5_000)]
# The direct tools/call path (no version header, a handshake-era version), the SDK's own stateless and stateful
# transports, and its 2026-07-28 entry.
MCP_MODES = [
    pytest.param({}, (), id="direct"),
    pytest.param({}, ((b"mcp-protocol-version", b"2025-11-25"),), id="direct-2025-11-25"),
    pytest.param({"MCP_JSON_RESPONSE": False}, (), id="sdk-stateless"),
    pytest.param({"MCP_STATELESS_HTTP": False}, (), id="sdk-stateful"),
    pytest.param({}, ((b"mcp-protocol-version", b"2026-07-28"),), id="2026-07-28"),
]


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("overrides", "headers"), MCP_MODES)
async def test_mcp_answers_deep_nesting_with_a_parse_error(api_key, settings, caplog, overrides, headers):
    """Issue #24: `POST /mcp` with a valid key answered deep nesting with a 500 and a RecursionError traceback
    (the method was read for rate counting before the SDK saw the body)."""
    from .test_serving import request, running_site

    for name, value in overrides.items():
        setattr(settings, name, value)
    _key, raw = api_key
    async with running_site() as app:
        answers = [await request(app, raw, body.encode(), headers=headers) for body in MCP_DEEP]
    for body, (status, _headers, answer) in zip(MCP_DEEP, answers, strict=True):
        assert status == 400, body[:60]
        assert json.loads(answer)["error"]["code"] == -32700, body[:60]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
