"""The merchant seed's REST endpoints: `POST /mcp/tools/list` and `POST /mcp/tools/call`."""

import pytest

from mcpsite.core.errors import MissingCredentials

pytestmark = pytest.mark.django_db


def test_tools_list_with_an_empty_object(http_post):
    response = http_post("/mcp/tools/list", {})
    names = [t["name"] for t in response.json()["tools"]]
    assert response.status_code == 200 and "test_echo" in names


def test_tools_call_returns_the_tool_result_as_the_body(http_post):
    response = http_post("/mcp/tools/call", {"name": "test_echo", "arguments": {"text": "むぎぼー"}})
    assert response.status_code == 200
    assert response.json() == {"echo": "むぎぼー", "transport": "rest"}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ("{oops", 400, -32700),
        ("[1, 2]", 400, -32602),
        ({"name": "missing_tool", "arguments": {}}, 404, -32602),
        ({"name": "test_echo", "arguments": {"text": 1}}, 400, -32602),
        ({"name": "test_echo", "arguments": "text"}, 400, -32602),
        ({"arguments": {}}, 400, -32602),
        ({"name": "test_conflict"}, 409, 409),
    ],
)
def test_errors_have_a_status_and_a_jsonrpc_error_object(http_post, body, status, code):
    response = http_post("/mcp/tools/call", body)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_without_key_is_401(http_post):
    response = http_post("/mcp/tools/call", {"name": "test_echo", "arguments": {"text": "a"}}, raw_key=None)
    assert response.status_code == 401
    assert response.json() == {"error": {"code": 401, "message": MissingCredentials.message}}


def test_inactive_key_is_401(http_post, api_key):
    key, raw = api_key
    key.is_active = False
    key.save()
    assert http_post("/mcp/tools/list", {}, raw_key=raw).status_code == 401


def test_scope_outside_the_key_is_403(http_post, make_api_key):
    _key, raw = make_api_key(scopes=["geo"])
    response = http_post("/mcp/tools/call", {"name": "test_echo", "arguments": {"text": "a"}}, raw_key=raw)
    assert response.status_code == 403
    listed = http_post("/mcp/tools/list", "{}", raw_key=raw)
    assert all(t["name"] != "test_echo" for t in listed.json()["tools"])


def test_rate_limited_call_is_429_with_retry_after(http_post, make_api_key):
    key, raw = make_api_key(rate="1/h")
    call = {"name": "test_echo", "arguments": {"text": "a"}}
    assert http_post("/mcp/tools/call", call, raw_key=raw).status_code == 200
    refused = http_post("/mcp/tools/call", call, raw_key=raw)
    assert refused.status_code == 429
    assert refused.json() == {"error": {"code": 429, "message": "Rate limit exceeded"}}
    assert 1 <= int(refused["Retry-After"]) <= 3600


def test_other_errors_have_no_retry_after(http_post):
    response = http_post("/mcp/tools/call", {"name": "missing_tool", "arguments": {}})
    assert response.status_code == 404 and "Retry-After" not in response


def test_a_group_endpoint_lists_and_calls_only_that_group(http_post):
    """`/mcp/<group>/tools/*` narrows as `/mcp/<group>` does for MCP (the merchant seed's server has three tools)."""
    listed = http_post("/mcp/reminders/tools/list", {})
    names = [t["name"] for t in listed.json()["tools"]]
    assert listed.status_code == 200 and "test_inband" in names and "test_echo" not in names
    called = http_post("/mcp/cinema/tools/call", {"name": "test_echo", "arguments": {"text": "a"}})
    assert called.status_code == 200 and called.json() == {"echo": "a", "transport": "rest"}
    outside = http_post("/mcp/reminders/tools/call", {"name": "test_echo", "arguments": {"text": "a"}})
    assert outside.status_code == 404 and outside.json()["error"]["code"] == -32602


def test_an_unknown_group_is_404_in_the_rest_shape(http_post):
    response = http_post("/mcp/nope/tools/list", {})
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "Unknown tool group: nope"


def test_a_group_endpoint_needs_the_key_and_its_scope(http_post, make_api_key):
    assert http_post("/mcp/cinema/tools/list", {}, raw_key=None).status_code == 401
    _key, raw = make_api_key(scopes=["geo"])
    assert http_post("/mcp/cinema/tools/list", {}, raw_key=raw).json() == {"tools": []}
    called = http_post("/mcp/cinema/tools/call", {"name": "test_echo", "arguments": {"text": "a"}}, raw_key=raw)
    assert called.status_code == 403
