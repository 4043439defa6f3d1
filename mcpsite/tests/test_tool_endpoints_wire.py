"""What `/rpc` and the REST tool endpoints answer on the wire, through the site's ASGI application (the guard
included): status, every header in order, and body, for success and each refusal. Pinned for whoever serves them
without DRF or outside Django's handler (docs/apps/cinema.md, issue 27): a client must see no difference."""

import json

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator

from mcpsite.guard import RequestGuard
from mcpsite.mcp import registry
from mcpsite.routing import Application

pytestmark = pytest.mark.django_db(transaction=True)  # keys are looked up and tools run in other threads

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
# What Django's middleware adds to each of these answers (LANGUAGE_CODE ja; no Accept-Language).
DJANGO = [
    ("content-security-policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
     "img-src 'self' data:; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"),
    ("x-frame-options", "DENY"),
]  # fmt: skip
AFTER_LENGTH = [
    ("vary", "Accept-Language"),
    ("content-language", "ja"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
    ("cross-origin-opener-policy", "same-origin"),
]
JSON_UTF8 = ("content-type", "application/json; charset=utf-8")
ALLOW = ("allow", "POST, OPTIONS")


def _django_answer(content_type, body: bytes, extra=()) -> list:
    return [content_type, *extra, ALLOW, *DJANGO, ("content-length", str(len(body))), *AFTER_LENGTH]


@pytest.fixture
def post(make_api_key):
    """post(path, body, method="POST", raw_key=<a key>, headers=[...]) -> (status, [(header, value)...], body)."""
    _key, default_raw = make_api_key(rate="3/m")

    async def request(path, body, method, raw_key, headers):
        sent = [(b"host", b"testserver"), (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()), *headers]  # fmt: skip
        if raw_key:
            sent.append((b"authorization", f"Bearer {raw_key}".encode()))
        scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"",
                 "headers": sent, "http_version": "1.1", "scheme": "http", "server": ("testserver", 80),
                 "client": ("127.0.0.1", 5000)}  # fmt: skip
        communicator = ApplicationCommunicator(RequestGuard(Application()), scope)
        await communicator.send_input({"type": "http.request", "body": body, "more_body": False})
        start = await communicator.receive_output(10)
        answer = await communicator.receive_output(10)
        headers = [(name.decode(), value.decode()) for name, value in start["headers"]]
        return start["status"], headers, answer.get("body", b"")

    def send(path, body=PING, method="POST", raw_key=default_raw, headers=()):
        return async_to_sync(request)(path, body, method, raw_key, list(headers))

    return send


def test_a_call(post):
    status, headers, body = post("/rpc", b'{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":"a"}}')
    assert (status, body) == (200, b'{"jsonrpc":"2.0","id":1,"result":{"echo":"a","transport":"rpc"}}')
    assert headers == _django_answer(JSON_UTF8, body)


def test_a_parse_error(post):
    status, headers, body = post("/rpc", b"{x")
    assert status == 400
    assert json.loads(body)["error"]["code"] == -32700
    assert headers == _django_answer(JSON_UTF8, body)


def test_no_key_is_refused_by_the_guard(post):
    status, headers, body = post("/rpc", raw_key=None)
    assert status == 401
    assert headers == [JSON_UTF8, ("content-length", str(len(body))), ("connection", "close"),
                       ("x-content-type-options", "nosniff"), ("x-frame-options", "DENY"),
                       ("www-authenticate", 'Bearer realm="mcpsite"')]  # fmt: skip


def test_an_oversize_body_is_refused_by_the_guard(post):
    limit = registry.max_request_bytes()  # /rpc serves every tool: geo's largest request
    status, headers, body = post("/rpc", b" " * (limit + 1))
    assert status == 413
    assert json.loads(body)["error"] == {
        "code": -32600, "message": "Request body too large", "data": f"The body may be at most {limit} bytes"
    }  # fmt: skip
    assert headers == [JSON_UTF8, ("content-length", str(len(body))), ("connection", "close"),
                       ("x-content-type-options", "nosniff"), ("x-frame-options", "DENY")]  # fmt: skip


def test_the_keys_rate_is_429_with_retry_after(post):
    call = b'{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":"a"}}'
    for _ in range(3):
        assert post("/rpc", call)[0] == 200
    status, headers, body = post("/rpc", call)
    assert (status, json.loads(body)["error"]) == (429, {"code": 429, "message": "Rate limit exceeded"})
    retry_after = dict(headers)["retry-after"]
    assert headers == _django_answer(JSON_UTF8, body, [("retry-after", retry_after)])
    assert 1 <= int(retry_after) <= 60


@pytest.mark.parametrize("path", ["/rpc", "/mcp/tools/call", "/mcp/cinema/tools/list"])
def test_get_is_405_with_allow(post, path):
    status, headers, body = post(path, b"", method="GET")
    assert (status, json.loads(body)) == (405, {"detail": 'メソッド "GET" は許されていません。'})
    assert headers == _django_answer(("content-type", "application/json"), body)


def test_options_describes_the_endpoint_as_drf_does(post):
    status, headers, body = post("/rpc", b"", method="OPTIONS")
    assert (status, json.loads(body)) == (200, {
        "name": "Json Rpc",
        "description": "`POST /rpc`: JSON-RPC 2.0 with a tool name as the method (the cinema seed's samples).",
        "renders": ["application/json"],
        "parses": [],
    })  # fmt: skip
    assert headers == _django_answer(("content-type", "application/json"), body)


def test_an_accept_header_without_json_is_406(post):
    status, headers, body = post("/rpc", headers=[(b"accept", b"text/html")])
    assert (status, json.loads(body)) == (406, {"detail": "リクエストのAcceptヘッダを満たすことができませんでした。"})
    assert headers == _django_answer(("content-type", "application/json"), body)


@pytest.mark.parametrize("accept", [b"*/*", b"application/json", b"application/*", b"text/html, application/json"])
def test_an_accept_header_that_allows_json_is_answered(post, accept):
    status, headers, body = post("/rpc", headers=[(b"accept", accept)])
    assert (status, body) == (200, b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert headers == _django_answer(JSON_UTF8, body)


def test_the_language_asked_for_names_itself(post):
    status, headers, body = post("/rpc", b"", method="GET", headers=[(b"accept-language", b"en")])
    assert (status, json.loads(body)) == (405, {"detail": 'Method "GET" not allowed.'})
    assert ("content-language", "en") in headers


def test_hsts_over_https(rpc_client, settings):
    """Django's SecurityMiddleware reads its settings when the handler is built: the test client's handler."""
    response = rpc_client.post("/rpc", PING, content_type="application/json", secure=True)
    assert response.status_code == 200
    assert response.headers["Strict-Transport-Security"] == f"max-age={settings.SECURE_HSTS_SECONDS}"


@pytest.fixture
def rpc_client(client, api_key):
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {api_key[1]}"
    return client


def test_rest_endpoints(post):
    status, headers, body = post("/mcp/tools/call", b'{"name":"test_echo","arguments":{"text":"a"}}')
    assert (status, body) == (200, b'{"echo":"a","transport":"rest"}')
    assert headers == _django_answer(JSON_UTF8, body)
    status, headers, body = post("/mcp/nope/tools/list", b"")
    assert (status, json.loads(body)["error"]["code"]) == (404, -32601)
    assert headers == _django_answer(JSON_UTF8, body)
