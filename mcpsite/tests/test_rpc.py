"""Seed JSON-RPC over `POST /rpc`: results, errors, batches, auth, bad input."""

import pytest

from mcpsite.core.errors import MissingCredentials

pytestmark = pytest.mark.django_db


def test_tool_name_as_method_returns_the_tool_result(rpc):
    response = rpc.post({"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": {"text": "映画", "count": 2}})
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": 1, "result": {"echo": "映画映画", "transport": "rpc"}}
    assert "映画映画" in response.content.decode()  # UTF-8, not \\u escapes


def test_domain_error_is_rendered_as_the_seed_shows(rpc):
    response = rpc.post({"jsonrpc": "2.0", "id": 5, "method": "test_conflict", "params": {}})
    assert response.json()["error"] == {
        "code": 409,
        "message": "Seat conflict",
        "data": {"conflicted_seats": ["A3"], "message": "Seat A3 is already reserved"},
    }


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("{not json", -32700),
        ("[]", -32600),
        ('{"jsonrpc":"1.0","id":1,"method":"test_echo"}', -32600),
        ('{"jsonrpc":"2.0","id":1,"method":"nope"}', -32601),
        ('{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{}}', -32602),
        ('{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":5}}', -32602),
        ('{"jsonrpc":"2.0","id":1,"method":"test_echo","params":[1]}', -32600),
        ('{"jsonrpc":"2.0","id":{},"method":"test_echo"}', -32600),
    ],
)
def test_bad_input_gets_a_specific_jsonrpc_error(rpc, body, code):
    response = rpc.post(body)
    assert response.status_code in (200, 400)
    assert response.json()["error"]["code"] == code


def test_unexpected_exception_reveals_nothing(rpc, caplog):
    response = rpc.post({"jsonrpc": "2.0", "id": 1, "method": "test_boom"})
    error = response.json()["error"]
    assert error["code"] == -32603
    assert "secret internals" not in response.content.decode()
    assert error["data"]["request_id"] in caplog.text


def test_batch_answers_each_request_and_skips_notifications(rpc):
    response = rpc.post(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": {"text": "a"}},
            {"jsonrpc": "2.0", "method": "test_echo", "params": {"text": "b"}},
            {"jsonrpc": "2.0", "id": 2, "method": "nope"},
        ]
    )
    answers = response.json()
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[1]["error"]["code"] == -32601


def test_missing_or_wrong_key_is_401(rpc):
    for raw, message in ((None, MissingCredentials.message), ("mcp_wrong", "Invalid API key")):
        response = rpc.post({"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": {"text": "a"}}, raw_key=raw)
        assert response.status_code == 401
        assert response.json()["error"] == {"code": 401, "message": message}


def test_tool_outside_scope_is_403(rpc, make_api_key):
    _key, raw = make_api_key(scopes=["ledger"])
    response = rpc.post({"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": {"text": "a"}}, raw_key=raw)
    assert response.json()["error"]["code"] == 403


def test_rate_limit_answers_429(rpc, make_api_key):
    key, raw = make_api_key(rate="3/m")
    codes = []
    for _ in range(4):
        response = rpc.post({"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": {"text": "a"}}, raw_key=raw)
        codes.append(response.status_code)
    assert codes == [200, 200, 200, 429]
    assert response.json()["error"] == {"code": 429, "message": "Rate limit exceeded"}
    # When to come back: the rest of the key's window (which had at least 15 s left when the burst began).
    assert 10 <= int(response["Retry-After"]) <= 60


def test_a_tools_own_throttle_is_429_without_the_keys_retry_after(rpc):
    response = rpc.post({"jsonrpc": "2.0", "id": 1, "method": "test_throttled", "params": {}})
    assert response.status_code == 429
    assert response.json()["error"] == {
        "code": 429,
        "message": "Rate limit exceeded",
        "data": "Too many attempts on this resource",
    }
    assert "Retry-After" not in response  # the key is within its rate: its window says nothing here


def test_oversize_body_is_refused(rpc):
    """/rpc serves every tool, so it takes the largest legitimate request of any (geo's), and no more."""
    from mcpsite.mcp import registry

    limit = registry.max_request_bytes()
    response = rpc.post({"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": {"text": "x" * limit}})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == -32600


def test_calls_are_audited_without_arguments(rpc):
    from mcpsite.models import ToolCall

    rpc.post({"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": {"text": "hunter2"}})
    rpc.post({"jsonrpc": "2.0", "id": 2, "method": "test_conflict"})
    calls = list(ToolCall.objects.order_by("created_at", "id").values("tool", "transport", "outcome", "error_code"))
    assert calls == [
        {"tool": "test_echo", "transport": "rpc", "outcome": "ok", "error_code": ""},
        {"tool": "test_conflict", "transport": "rpc", "outcome": "error", "error_code": "409"},
    ]


def test_calls_record_what_the_caller_was_told_and_never_a_value_or_internals(rpc):
    """The tool-call log keeps each failure's message (the error's detail) for staff; a schema refusal's message
    names the field, not the value, and an internal error's says nothing of the exception."""
    from mcpsite.models import ToolCall

    rpc.post({"jsonrpc": "2.0", "id": 1, "method": "test_conflict"})
    rpc.post({"jsonrpc": "2.0", "id": 2, "method": "test_echo", "params": {"text": 12345678}})
    rpc.post({"jsonrpc": "2.0", "id": 3, "method": "test_boom"})
    rpc.post({"jsonrpc": "2.0", "id": 4, "method": "test_echo", "params": {"text": "hunter2"}})
    messages = list(ToolCall.objects.order_by("created_at", "id").values_list("tool", "outcome", "error_message"))
    assert messages == [
        ("test_conflict", "error", "Seat A3 is already reserved"),
        ("test_echo", "error", "text: must be of type string"),
        ("test_boom", "internal", ""),
        ("test_echo", "ok", ""),
    ]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"text": 12345678}, "text: must be of type string"),
        ({"text": "a", "count": 0}, "count: must be at least 1"),
        ({}, "'text' is a required property"),
    ],
)
def test_validation_messages_are_specific_and_never_echo_the_value(rpc, params, expected):
    response = rpc.post({"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": params})
    assert response.json()["error"] == {"code": -32602, "message": "Invalid params", "data": expected}
    assert "12345678" not in response.content.decode()


@pytest.mark.parametrize("request_id", [True, 1.5, [1]])
def test_ids_that_are_not_strings_numbers_or_null_are_invalid(rpc, request_id):
    response = rpc.post({"jsonrpc": "2.0", "id": request_id, "method": "test_echo", "params": {"text": "a"}})
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request", "data": "id must be a string, a number or null"},
    }
