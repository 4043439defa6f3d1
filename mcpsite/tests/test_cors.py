"""CORS at the ingress (mcpsite/cors.py through mcpsite.guard), in process, on every door a browser client calls.

Issue #37: a host in a web page was blocked at its first request (the preflight `OPTIONS /mcp` got 401 without
`Access-Control-Allow-Origin`). The browser itself is driven in test_cors_browser.py.
"""

import json

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.core import checks

from mcpsite.guard import RequestGuard
from mcpsite.mcp.http import _security_settings
from mcpsite.routing import Application

pytestmark = pytest.mark.django_db(transaction=True)  # keys are looked up in worker threads

PAGE = "http://localhost:5173"
MCP_DOORS = ["/mcp", "/mcp/cinema", "/rpc", "/mcp/tools/call", "/mcp/cinema/tools/list"]
OAUTH_DOORS = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/oauth/token/",
    "/oauth/revoke/",
    "/oauth/register/",
]
REQUESTED = b"authorization, content-type, mcp-protocol-version, mcp-session-id"


@pytest.fixture
def allowed(settings):
    settings.CORS_ALLOWED_ORIGINS = [PAGE, "https://inspector.example.com"]


@pytest.fixture(scope="module")
def guard():
    return RequestGuard(Application())


def _request(guard, method, path, headers, body=b"", host=b"testserver"):
    headers = [(b"host", host), (b"content-length", str(len(body)).encode()), *headers]
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": headers, "http_version": "1.1", "scheme": "http", "server": ("testserver", 80),
             "client": ("127.0.0.1", 5000)}  # fmt: skip

    async def exchange():
        communicator = ApplicationCommunicator(guard, scope)
        await communicator.send_input({"type": "http.request", "body": body, "more_body": False})
        start = await communicator.receive_output(10)
        chunks = [await communicator.receive_output(10)]
        while chunks[-1].get("more_body"):
            chunks.append(await communicator.receive_output(10))
        # A browser refuses an answer with two Access-Control-Allow-Origin values.
        assert [name for name, _value in start["headers"]].count(b"access-control-allow-origin") <= 1
        return start["status"], dict(start["headers"]), b"".join(c.get("body", b"") for c in chunks)

    return async_to_sync(exchange)()


def _preflight(guard, path, origin=PAGE, method=b"POST"):
    headers = [(b"origin", origin.encode()), (b"access-control-request-method", method),
               (b"access-control-request-headers", REQUESTED)]  # fmt: skip
    return _request(guard, "OPTIONS", path, headers)


@pytest.mark.parametrize("path", MCP_DOORS + OAUTH_DOORS)
def test_a_preflight_from_an_allowed_origin_is_answered_without_credentials(guard, allowed, path):
    status, headers, body = _preflight(guard, path)
    assert status == 204 and body == b""
    assert headers[b"access-control-allow-origin"] == PAGE.encode()
    assert set(headers[b"access-control-allow-methods"].split(b", ")) >= {b"GET", b"POST", b"DELETE"}
    assert headers[b"access-control-allow-headers"] == REQUESTED
    assert b"access-control-allow-credentials" not in headers  # bearer tokens, never cookies
    assert b"Origin" in headers[b"vary"]


@pytest.mark.parametrize("path", ["/mcp", "/rpc", "/oauth/token/"])
def test_a_preflight_from_another_origin_is_refused_without_cors_headers(guard, allowed, path):
    status, headers, _body = _preflight(guard, path, origin="https://evil.example")
    assert status == 403
    assert not any(name.startswith(b"access-control-") for name in headers)


def test_with_no_allowed_origins_by_default_no_door_answers_a_page(guard, settings):
    assert settings.CORS_ALLOWED_ORIGINS == []
    status, headers, _body = _preflight(guard, "/mcp")
    assert status == 401  # not answered as a preflight: the credential is asked for as for any request
    assert not any(name.startswith(b"access-control-") for name in headers)


@pytest.mark.parametrize("path", ["/mcp", "/mcp/cinema"])
def test_a_401_from_an_allowed_origin_carries_the_challenge_a_page_can_read(guard, allowed, path):
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    headers = [(b"origin", PAGE.encode()), (b"content-type", b"application/json")]
    status, answer, _body = _request(guard, "POST", path, headers, ping)
    assert status == 401
    assert answer[b"access-control-allow-origin"] == PAGE.encode()
    exposed = {name.strip().lower() for name in answer[b"access-control-expose-headers"].split(b",")}
    assert {b"www-authenticate", b"mcp-session-id", b"retry-after", b"mcp-protocol-version"} <= exposed
    assert b"idempotent-replayed" in exposed
    assert answer[b"www-authenticate"].startswith(b"Bearer ")


@pytest.mark.parametrize(
    "path, call",
    [
        ("/rpc", {"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": {"text": "a"}}),
        ("/mcp/tools/list", {}),
        ("/mcp/cinema/tools/list", {}),
    ],
)
def test_the_seed_doors_answer_an_allowed_origin_refused_or_served(guard, allowed, api_key, path, call):
    _key, raw = api_key
    json_body = [(b"origin", PAGE.encode()), (b"content-type", b"application/json")]
    status, headers, _body = _request(guard, "POST", path, json_body, b"{}")
    assert status == 401 and headers[b"access-control-allow-origin"] == PAGE.encode()
    auth = (b"authorization", f"Bearer {raw}".encode())
    status, headers, body = _request(guard, "POST", path, [*json_body, auth], json.dumps(call).encode())
    assert status == 200, body
    assert headers[b"access-control-allow-origin"] == PAGE.encode()
    assert "result" in json.loads(body) or "tools" in json.loads(body)


def test_an_oauth_discovery_document_is_readable_by_an_allowed_origin(guard, allowed):
    status, headers, body = _request(
        guard, "GET", "/.well-known/oauth-authorization-server", [(b"origin", PAGE.encode())]
    )
    assert status == 200 and json.loads(body)["token_endpoint"].endswith("/oauth/token/")
    assert headers[b"access-control-allow-origin"] == PAGE.encode()  # one value: the library's own `*` replaced
    assert b"Origin" in headers[b"vary"]


def test_other_origins_and_other_pages_get_no_cors_headers(guard, allowed):
    foreign = _request(guard, "POST", "/oauth/token/", [(b"origin", b"https://evil.example")])
    assert foreign[0] == 400 and b"access-control-allow-origin" not in foreign[1]
    # The sign-in and staff pages are navigations: never readable from another page, never preflighted here.
    for path in ["/oauth/login/", "/admin/login/"]:
        status, headers, _body = _preflight(guard, path)
        assert status != 204 and b"access-control-allow-origin" not in headers


def test_a_foreign_host_is_refused_before_a_preflight_is_answered(guard, allowed):
    preflight = [(b"origin", PAGE.encode()), (b"access-control-request-method", b"POST")]
    status, _headers, _body = _request(guard, "OPTIONS", "/mcp", preflight, host=b"evil.example")
    assert status == 400


def test_the_allowed_origins_pass_the_mcp_transports_origin_check(settings):
    settings.ALLOWED_HOSTS = ["mcp.example.com"]
    settings.CORS_ALLOWED_ORIGINS = ["https://inspector.example.com"]
    assert "https://inspector.example.com" in _security_settings().allowed_origins


@pytest.mark.parametrize(
    "origin", ["*", "null", "https://app.example.com/", "https://app.example.com/path", "app.example"]
)
def test_an_entry_that_is_not_an_origin_stops_the_checks(settings, origin):
    settings.CORS_ALLOWED_ORIGINS = [origin]
    errors = [m for m in checks.run_checks() if m.id == "mcpsite.E006"]
    assert errors and origin in errors[0].msg
