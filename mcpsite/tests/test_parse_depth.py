"""Deeply nested JSON is a parse error (-32700) on every transport, never a 500 page or a dropped socket."""

import pytest

from reminders.tests.ws_client import exchange_raw

pytestmark = pytest.mark.django_db

DEEP = [
    "[" * 100_000,  # issue #17: an HTML 500 and a RecursionError traceback
    '{"a":' * 100_000,
    '{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":' + "[" * 100_000 + "]" * 100_000 + "}}",
]


@pytest.mark.parametrize("body", DEEP)
def test_rpc_answers_deep_nesting_with_a_parse_error(http_post, body):
    response = http_post("/rpc", body)
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
