"""mcpsite.guard, in process: bodies are refused by size, time and key before Django or the SDK reads them."""

import asyncio
import json

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.utils import timezone

from mcpsite.guard import RequestGuard
from mcpsite.mcp import registry
from mcpsite.models import ApiKey
from mcpsite.routing import Application

pytestmark = pytest.mark.django_db(transaction=True)  # keys are looked up in worker threads

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def _scope(path, raw_key=None, length=None):
    headers = [(b"content-type", b"application/json"), (b"host", b"testserver")]
    if raw_key:
        headers.append((b"authorization", f"Bearer {raw_key}".encode()))
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    return {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(), "query_string": b"",
            "headers": headers, "http_version": "1.1", "scheme": "http", "server": ("testserver", 80),
            "client": ("127.0.0.1", 5000)}  # fmt: skip


class Counting:
    """The app behind the guard, counting the body bytes it is handed."""

    def __init__(self, app):
        self.app, self.seen = app, 0

    async def __call__(self, scope, receive, send):
        async def counted():
            message = await receive()
            self.seen += len(message.get("body", b""))
            return message

        await self.app(scope, counted, send)


async def _answer(communicator):
    start = await communicator.receive_output(10)
    body = await communicator.receive_output(10)
    return start["status"], dict(start["headers"]), json.loads(body["body"])


@pytest.fixture
def guarded():
    return Counting(Application())


async def _await(coroutine):
    return await coroutine


def run(coroutine):
    return async_to_sync(_await)(coroutine)


@pytest.mark.parametrize("path", ["/rpc", "/mcp/tools/call", "/mcp/cinema/tools/call"])
def test_no_key_is_refused_before_a_byte_of_the_body_is_read(guarded, path):
    """Issue #17: without a key /rpc accepted a 1 GiB Content-Length and buffered 300 MB before its 401."""

    async def scenario():
        communicator = ApplicationCommunicator(RequestGuard(guarded), _scope(path, length=10**9))
        # no body is sent at all: the answer cannot depend on it
        return await _answer(communicator)

    status, headers, body = run(scenario())
    assert status == 413 and body["error"]["code"] == -32600 and guarded.seen == 0
    no_length = run(_answer(ApplicationCommunicator(RequestGuard(guarded), _scope(path))))
    assert no_length[0] == 401 and guarded.seen == 0
    assert no_length[1][b"www-authenticate"] == b'Bearer realm="mcpsite"'


def test_declared_length_over_the_limit_is_413_in_each_endpoints_shape(guarded, api_key):
    """Each endpoint's limit is the largest request of the tools it serves (these serve geo's 10,000 points)."""
    _key, raw = api_key
    too_big = registry.max_request_bytes() + 1

    async def refused(path):
        return await _answer(ApplicationCommunicator(RequestGuard(guarded), _scope(path, raw, length=too_big)))

    status, _headers, body = run(refused("/rpc"))
    assert status == 413 and body["jsonrpc"] == "2.0" and body["error"]["code"] == -32600
    status, _headers, body = run(refused("/mcp/tools/call"))
    assert status == 413 and set(body) == {"error"} and body["error"]["code"] == -32600
    status, _headers, body = run(refused("/mcp"))
    assert status == 413 and body["error"]["code"] == -32600
    assert guarded.seen == 0


def test_a_streamed_body_is_cut_off_at_the_limit(guarded, api_key):
    """No Content-Length (chunked): the guard counts what arrives and stops at the limit."""
    _key, raw = api_key
    chunk = b" " * 256_000
    limit = registry.max_request_bytes()

    async def scenario():
        communicator = ApplicationCommunicator(RequestGuard(guarded), _scope("/rpc", raw))
        sent = 0
        while sent <= limit:
            await communicator.send_input({"type": "http.request", "body": chunk, "more_body": True})
            sent += len(chunk)
        return await _answer(communicator)

    status, _headers, body = run(scenario())
    assert status == 413 and body["error"]["data"] == f"The body may be at most {limit} bytes"
    assert guarded.seen == 0


def test_a_slow_body_times_out_while_another_keys_call_answers(guarded, make_api_key, settings):
    settings.HTTP_BODY_TIMEOUT_S = 1
    (_a, slow_key), (_b, other_key) = make_api_key(name="slow"), make_api_key(name="other")
    # keys in use: no last-used write, which SQLite's in-memory test database would serialise across threads
    ApiKey.objects.update(last_used_at=timezone.now())

    async def scenario():
        app = RequestGuard(guarded)
        slow = [ApplicationCommunicator(app, _scope("/rpc", slow_key, length=len(PING))) for _ in range(20)]
        for communicator in slow:
            await communicator.send_input({"type": "http.request", "body": PING[:5], "more_body": True})
        other = ApplicationCommunicator(app, _scope("/rpc", other_key, length=len(PING)))
        await other.send_input({"type": "http.request", "body": PING, "more_body": False})
        answered = await _answer(other)
        still_waiting = [await c.receive_nothing(0.01) for c in slow]
        return answered, still_waiting, await asyncio.gather(*(_answer(c) for c in slow))

    answered, still_waiting, timed_out = run(scenario())
    assert answered[0] == 200 and answered[2] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert all(still_waiting)
    assert {(status, body["error"]["message"]) for status, _h, body in timed_out} == {(408, "Request body timed out")}


def test_a_good_request_passes_through(guarded, api_key):
    _key, raw = api_key
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "test_echo", "params": {"text": "a"}}).encode()

    async def scenario():
        communicator = ApplicationCommunicator(RequestGuard(guarded), _scope("/rpc", raw, length=len(body)))
        await communicator.send_input({"type": "http.request", "body": body, "more_body": False})
        return await _answer(communicator)

    status, _headers, answer = run(scenario())
    assert status == 200 and answer["result"]["echo"] == "a"
    assert guarded.seen == len(body)


def test_mcp_responses_say_nosniff_and_deny_framing(guarded):
    async def scenario():
        communicator = ApplicationCommunicator(RequestGuard(guarded), _scope("/mcp", length=2))
        await communicator.send_input({"type": "http.request", "body": b"{}", "more_body": False})
        return await _answer(communicator)

    _status, headers, _body = run(scenario())  # 503 here (no lifespan): headers on every MCP answer
    assert headers[b"x-content-type-options"] == b"nosniff"
    assert headers[b"x-frame-options"] == b"DENY"
