"""The one request pipeline: every door counts every request with a credential exactly once (unknown tools, tools
outside the key's scopes, malformed calls, pings, initialize, each element of a batch), and bounds bodies by what
its endpoint legitimately accepts. Each door has a control: a key with room to spare is answered every time."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from mcpsite.mcp import caps, registry
from mcpsite.models import ToolCall
from reminders.tests.ws_client import exchange

from .modern import envelope, routing_headers
from .test_serving import request, running_site

MODERN = [(b"mcp-protocol-version", b"2026-07-28")]
UNKNOWN = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}
NO_NAME = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"arguments": {}}}
PING = {"jsonrpc": "2.0", "id": 9, "method": "ping"}


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _statuses(answers) -> list[int]:
    return [status for status, _headers, _body in answers]


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("headers", [[], MODERN], ids=["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("message", [UNKNOWN, NO_NAME, PING], ids=["unknown tool", "no name", "ping"])
async def test_mcp_counts_every_request_of_a_key(make_api_key, rate_clock, headers, message):
    _limited, raw = await sync_to_async(make_api_key)(rate="3/m")
    _control, control_raw = await sync_to_async(make_api_key)(name="control", rate="100/m")
    async with running_site() as app:
        answers = [await request(app, raw, message, headers=headers) for _ in range(5)]
        controls = [await request(app, control_raw, message, headers=headers) for _ in range(5)]
    assert [status == 429 for status in _statuses(answers)] == [False, False, False, True, True]
    _status, refused_headers, body = answers[3]
    assert json.loads(body)["error"]["code"] == 429 and int(refused_headers[b"retry-after"]) >= 1
    assert 429 not in _statuses(controls)


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_tool_outside_the_keys_scopes_counts_too(make_api_key, rate_clock):
    _key, raw = await sync_to_async(make_api_key)(rate="2/m", scopes=["geo"])
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_echo", "arguments": {}}}
    async with running_site() as app:
        answers = [await request(app, raw, call) for _ in range(3)]
    assert _statuses(answers)[2] == 429
    refused = await sync_to_async(lambda: list(ToolCall.objects.values_list("outcome", flat=True)))()
    assert refused.count(ToolCall.Outcome.RATE_LIMITED) == 1


def _plain_call(modern: bool) -> tuple[dict, list[tuple[bytes, bytes]]]:
    """A plain tools/call of test_echo (answered by mcpsite/mcp/direct.py) with its revision's headers."""
    params = {"name": "test_echo", "arguments": {"text": "hi"}}
    if not modern:
        return {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}, []
    message = envelope(5, "tools/call", params)
    return message, routing_headers(message)


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_a_plain_call_is_counted_once_in_its_own_thread_before_the_tool_runs(
    make_api_key, rate_clock, monkeypatch, modern
):
    """The count travels with a plain call into its worker thread (no hop of its own): over the rate, the tool does
    not run and the answer is the ingress's refusal (429, the request's id, `Retry-After`, the security headers)."""
    from mcpsite.mcp import dispatch

    hops: list[object] = []
    real_hop = dispatch._take_in_thread
    monkeypatch.setattr(dispatch, "_take_in_thread", lambda admission: hops.append(admission) or real_hop(admission))
    message, headers = _plain_call(modern)
    _limited, raw = await sync_to_async(make_api_key)(rate="3/m")
    _control, control_raw = await sync_to_async(make_api_key)(name="control", rate="100/m")
    async with running_site() as app:
        answers = [await request(app, raw, message, headers=headers) for _ in range(5)]
        controls = [await request(app, control_raw, message, headers=headers) for _ in range(5)]
    assert _statuses(answers) == [200, 200, 200, 429, 429] and _statuses(controls) == [200] * 5
    _status, refused_headers, body = answers[3]
    assert json.loads(body) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": 429, "message": json.loads(body)["error"]["message"]},
    }
    assert int(refused_headers[b"retry-after"]) >= 1 and refused_headers[b"x-content-type-options"] == b"nosniff"
    outcomes = await sync_to_async(lambda: list(ToolCall.objects.values_list("outcome", flat=True)))()
    assert outcomes.count(ToolCall.Outcome.OK) == 8 and outcomes.count(ToolCall.Outcome.RATE_LIMITED) == 2
    assert hops == []


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_a_plain_call_whose_count_cannot_be_taken_is_503(api_key, monkeypatch, modern):
    from redis.exceptions import ConnectionError as RedisConnectionError

    from mcpsite.mcp import dispatch

    def down(_api_key):
        raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(dispatch, "over_api_key_rate", down)
    message, headers = _plain_call(modern)
    _key, raw = api_key
    async with running_site() as app:
        status, answer_headers, body = await request(app, raw, message, headers=headers)
    assert status == 503 and answer_headers[b"retry-after"] == b"5"
    assert json.loads(body)["id"] == 5 and json.loads(body)["error"]["code"] == 503
    assert not await sync_to_async(ToolCall.objects.filter(outcome=ToolCall.Outcome.OK).exists)()


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_a_request_has_one_id_from_its_count_to_its_audit_row(api_key, monkeypatch, modern):
    from mcpsite.mcp import dispatch

    drawn: list[str] = []
    real = dispatch.new_request_id
    monkeypatch.setattr(dispatch, "new_request_id", lambda: drawn.append(real()) or drawn[-1])
    message, headers = _plain_call(modern)
    async with running_site() as app:
        status, _headers, _body = await request(app, api_key[1], message, headers=headers)
    audited = await sync_to_async(lambda: list(ToolCall.objects.values_list("request_id", flat=True)))()
    assert status == 200 and len(drawn) == 1 and audited == drawn


def test_request_ids_differ_in_each_forked_worker():
    """Ids come from a generator of the process's own (not os.urandom): a worker forked from the same parent
    draws its own, and seeding the global generator (as Hypothesis does) does not repeat them."""
    import os
    import random
    import re

    from mcpsite.mcp import dispatch

    state = random.getstate()  # the global generator is the other tests' too
    try:
        random.seed(0)
        first = dispatch.new_request_id()
        random.seed(0)
        assert dispatch.new_request_id() != first and re.fullmatch(r"[0-9a-f]{16}", first)
    finally:
        random.setstate(state)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe and leaves at once
        os.write(write, dispatch.new_request_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    in_child = os.read(read, 64).decode()
    os.close(read)
    assert re.fullmatch(r"[0-9a-f]{16}", in_child) and in_child != dispatch.new_request_id()


@pytest.mark.django_db
def test_rpc_counts_pings_and_each_element_of_a_batch(rpc, make_api_key, rate_clock):
    _key, raw = make_api_key(rate="3/m")
    batch = [{**PING, "id": n} for n in range(5)]
    answers = rpc.post(batch, raw_key=raw).json()
    codes = [answer.get("error", {}).get("code") for answer in answers]
    assert codes == [None, None, None, 429, 429]
    assert rpc.post(PING, raw_key=raw).status_code == 429
    _other, control = make_api_key(name="control", rate="100/m")
    assert all("result" in answer for answer in rpc.post(batch, raw_key=control).json())


@pytest.mark.django_db
def test_rpc_counts_unknown_methods_and_malformed_messages(rpc, make_api_key, rate_clock):
    _key, raw = make_api_key(rate="3/m")
    for body in ({"jsonrpc": "2.0", "id": 1, "method": "no_such"}, {"id": 2}, "{not json"):
        rpc.post(body, raw_key=raw)
    assert rpc.post(PING, raw_key=raw).json()["error"]["code"] == 429


@pytest.mark.django_db(transaction=True)
def test_websocket_counts_pings(make_api_key, rate_clock):
    _key, raw = make_api_key(rate="3/m")
    answers, _closed = exchange(raw, [{**PING, "id": n} for n in range(4)])
    assert [answer.get("error", {}).get("code") for answer in answers] == [None, None, None, 429]
    _other, control = make_api_key(name="control", rate="100/m")
    answers, _closed = exchange(control, [{**PING, "id": n} for n in range(4)])
    assert all("result" in answer for answer in answers)


def test_each_endpoint_accepts_what_its_tools_legitimately_receive(settings):
    """geo's 10,000 points with 128-character refs (escaped as an ASCII-only encoder writes Japanese) fit on every
    endpoint that serves geo; an endpoint without geo keeps MCP_MAX_BODY_BYTES."""
    point = {"ref": "参" * 128, "lat": -35.123456789012345, "lon": -139.12345678901234}
    seed_request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "resolve_points", "arguments": {"points": [point] * 10_000}}}  # fmt: skip
    largest = len(json.dumps(seed_request).encode())  # ensure_ascii: every ref character as \uXXXX
    assert largest > settings.MCP_MAX_BODY_BYTES
    assert registry.max_request_bytes(None) >= largest
    assert registry.max_request_bytes(["geo"]) >= largest
    assert registry.max_request_bytes(["cinema"]) == settings.MCP_MAX_BODY_BYTES


def test_per_key_caps_are_one_set_per_process():
    """The site's and the merchant endpoint's MCP apps share the process's caps (a key got each cap twice)."""
    from mcpsite.routing import Application

    app = Application()
    assert app.mcp_named, "the merchant endpoint has an app of its own"
    assert not any(hasattr(mcp, "listen_streams") or hasattr(mcp, "key_sessions") for mcp in app.mcp_named.values())
    with caps.listen_streams.hold(1):
        assert caps.listen_streams.count(1) == 1


@pytest.fixture
def database_down_tool():
    """A tool whose database does not answer (as during a PostgreSQL restart)."""
    from django.db import OperationalError

    from mcpsite.mcp.registry import ToolSpec, register, unregister

    def down(_arguments, _ctx):
        raise OperationalError("server closed the connection unexpectedly")

    register(ToolSpec("test_database_down", "geo", "Its database is down", {"type": "object"}, down))
    yield "test_database_down"
    unregister("test_database_down")


@pytest.mark.django_db
def test_a_dependency_that_does_not_answer_is_503_with_retry_after_logged_once(rpc, database_down_tool, caplog):
    from mcpsite.mcp import outages

    outages._last_logged.clear()
    answers = [rpc.post({"jsonrpc": "2.0", "id": n, "method": database_down_tool, "params": {}}) for n in range(3)]
    errors = [answer.json()["error"] for answer in answers]
    assert all(error["code"] == 503 and "database" in error["data"] for error in errors)
    assert all(answer.status_code == 503 and answer["Retry-After"] == "5" for answer in answers)
    outage_lines = [r for r in caplog.records if "not answering" in r.getMessage()]
    assert len(outage_lines) == 1 and not any(r.exc_info for r in caplog.records)


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_an_mcp_call_that_meets_an_outage_is_503_with_retry_after(api_key, database_down_tool, modern):
    """The database goes away after the ingress let the call in: the SDK's JSON-RPC error, in an HTTP 503 that says
    when to retry. The control, a tool that answers, is 200 without the header."""
    _key, raw = api_key
    call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": database_down_tool, "arguments": {}}}
    control = {**call, "params": {"name": "test_echo", "arguments": {"text": "hi"}}}
    if modern:
        call, control = envelope(4, "tools/call", call["params"]), envelope(5, "tools/call", control["params"])
    async with running_site() as app:
        status, headers, body = await request(app, raw, call, headers=routing_headers(call) if modern else [])
        control_status, control_headers, _ = await request(
            app, raw, control, headers=routing_headers(control) if modern else []
        )
    assert status == 503 and headers[b"retry-after"] == b"5", (status, body)
    error = json.loads(body)["error"]
    assert error["code"] == 503 and "database" in error["data"]
    assert control_status == 200 and b"retry-after" not in control_headers


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_credential_lookup_the_database_cannot_answer_is_503(api_key, monkeypatch):
    """The ingress's key lookup during an outage: 503 with Retry-After in the door's shape, never a plain 500."""
    from django.db import OperationalError

    from mcpsite.mcp import auth

    async def down(**_credentials):
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(auth, "_authenticate_in_worker", down)
    auth.recent_keys.clear()
    _key, raw = api_key
    async with running_site() as app:
        status, headers, body = await request(app, raw, PING)
    assert status == 503 and headers[b"retry-after"] == b"5"
    assert json.loads(body)["error"]["code"] == 503


@pytest.mark.django_db
def test_a_limiter_that_cannot_count_refuses_with_503_on_every_door(rpc, http_post, monkeypatch):
    """Redis (or the database) down under the limiter: the request is refused in the door's shape, fail closed."""
    from redis.exceptions import ConnectionError as RedisConnectionError

    from mcpsite.mcp import dispatch

    def down(_api_key):
        raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(dispatch, "over_api_key_rate", down)
    answer = rpc.post(PING)
    assert answer.status_code == 503 and answer.json()["error"]["code"] == 503 and answer["Retry-After"] == "5"
    rest = http_post("/mcp/tools/list", {})
    assert rest.status_code == 503 and rest.json()["error"]["code"] == 503


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("path", "message", "headers"),
    [
        ("/rpc", PING, []),
        ("/mcp/tools/call", {"name": "test_echo", "arguments": {"text": "hi"}}, []),
        ("/mcp", envelope(3, "tools/list", {}), routing_headers(envelope(3, "tools/list", {}))),
        ("/rpc", b"{not json", []),
    ],
    ids=["rpc", "rest", "mcp", "rpc malformed"],
)
async def test_the_ingress_parses_a_body_once_for_everyone_downstream(api_key, monkeypatch, path, message, headers):
    """The body's JSON is read once, by the ingress; the view, the REST endpoint and the MCP app's listen check
    take it from the scope (the SDK parses what it serves with its own models)."""
    from mcpsite.mcp import jsonrpc

    parses: list[bytes] = []
    real_parse = jsonrpc.parse
    monkeypatch.setattr(jsonrpc, "parse", lambda body: parses.append(body) or real_parse(body))
    _key, raw = api_key
    async with running_site() as app:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        length = [(b"content-length", str(len(body)).encode())]
        status, _headers, _body = await request(app, raw, body, headers=[*headers, *length], path=path)
    assert status == (200 if isinstance(message, dict) else 400)
    assert len(parses) == 1


@pytest.mark.django_db
def test_a_nul_in_a_callers_text_never_costs_the_audit_row(rpc, api_key):
    """A tool name or an error's detail may carry a caller's NUL, which PostgreSQL's text columns refuse (a refused
    row lost its whole batch): it is stored as U+FFFD."""
    _key, raw = api_key
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "no\u0000such", "arguments": {}}}
    assert rpc.post(call, raw_key=raw).json()["error"]["code"] == -32602
    row = ToolCall.objects.get()
    assert row.tool == "no\ufffdsuch" and "\ufffd" in row.error_message and "\x00" not in row.error_message
