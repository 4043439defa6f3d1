"""Serving the way sites are deployed: several processes, the standard deploy steps, and bounds on what one key
(or one dead upstream) can take from the others. Speed lives in bench/bench_serving.py; nothing here is timed
beyond generous bounds."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading

import anyio
import httpx2
import pytest
from asgiref.sync import sync_to_async
from asgiref.testing import ApplicationCommunicator
from django.db import connection

from mcpsite.core.errors import Unauthorized
from mcpsite.guard import RequestGuard
from mcpsite.mcp import audit, auth, caps, dispatch
from mcpsite.mcp.auth import api_key_from_scope, recent_keys
from mcpsite.mcp.registry import ToolSpec, register, unregister
from mcpsite.models import ApiKey, ToolCall
from mcpsite.routing import Application

from .live import AlternatingProxy, live_site, mcp_session

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ECHO = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "test_echo", "arguments": {"text": "x"}}}


# --- the standard deploy ------------------------------------------------------------------------


@pytest.mark.django_db
def test_migrate_alone_creates_the_cache_table():
    """The rate-limit counters' table comes with `migrate` (it needed a separate createcachetable)."""
    assert "mcpsite_cache" in connection.introspection.table_names()


# --- in-process HTTP: counting every MCP request, session caps ------------------------------------


@contextlib.asynccontextmanager
async def running_site():
    app = Application()
    lifespan = ApplicationCommunicator(app, {"type": "lifespan"})
    await lifespan.send_input({"type": "lifespan.startup"})
    assert (await lifespan.receive_output(10))["type"] == "lifespan.startup.complete"
    try:
        yield app
    finally:
        await lifespan.send_input({"type": "lifespan.shutdown"})
        await lifespan.receive_output(10)


async def request(app, raw_key: str, message: dict | bytes | None, method="POST", headers=(), path="/mcp"):
    """One request to `app`'s `path`: `message` as JSON (bytes as sent) -> (status, headers, body)."""
    scope = {
        "type": "http", "method": method, "path": path, "query_string": b"", "scheme": "http",
        "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5000),
        "headers": list({**{b"host": b"127.0.0.1:8000", b"content-type": b"application/json",
                            b"accept": b"application/json, text/event-stream",
                            b"authorization": f"Bearer {raw_key}".encode()}, **dict(headers)}.items()),
    }  # fmt: skip
    http = ApplicationCommunicator(RequestGuard(app), scope)
    body = message if isinstance(message, bytes) else json.dumps(message).encode() if message else b""
    await http.send_input({"type": "http.request", "body": body})
    start = await http.receive_output(20)
    body = b""
    while True:
        part = await http.receive_output(20)
        body += part.get("body", b"")
        if not part.get("more_body"):
            break
    return start["status"], dict(start["headers"]), body


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_initialize_counts_against_the_key(make_api_key):
    """A 3/min key gets its third initialize and a 429 for the fourth (initialize was not counted: one key opened
    9,994 sessions in 76 s); another key is still served."""
    make = sync_to_async(make_api_key)
    (_key, raw), (_other, other_raw) = await make(rate="3/m"), await make(name="other")
    async with running_site() as app:
        statuses = [(await request(app, raw, INITIALIZE))[0] for _ in range(4)]
        other_status, _, _ = await request(app, other_raw, INITIALIZE)
        _, headers, body = await request(app, raw, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert statuses == [200, 200, 200, 429]
    assert other_status == 200
    assert json.loads(body)["error"]["code"] == 429 and int(headers[b"retry-after"]) >= 1


@pytest.fixture
def key_clock(monkeypatch):
    """The clock of the transports' key cache, moved by hand (no test waits on a real clock)."""
    now = [1000.0]
    monkeypatch.setattr(recent_keys, "clock", lambda: now[0])
    recent_keys.clear()
    yield now
    recent_keys.clear()


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_key_revoked_elsewhere_stops_working_within_the_cache_bound(api_key, key_clock, settings):
    """The transports trust a key they checked for MCP_API_KEY_CACHE_SECONDS without a query (a query and a thread
    hop on every request was a hot spot of the MCP path). A deactivation the cache cannot see (another process, a
    queryset update) takes effect when that bound has passed, not later."""
    settings.MCP_API_KEY_CACHE_SECONDS = 5
    key, raw = api_key
    async with running_site() as app:
        first, _, _ = await request(app, raw, ECHO)
        await sync_to_async(ApiKey.objects.filter(pk=key.pk).update)(is_active=False)
        within, _, _ = await request(app, raw, ECHO)
        key_clock[0] += 5
        after, _, body = await request(app, raw, ECHO)
    assert (first, within, after) == (200, 200, 401)
    assert json.loads(body)["error"]["code"] == 401


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_cached_key_is_not_looked_up_again(api_key, key_clock, monkeypatch):
    """Within the bound a request authenticates without a lookup (no query, no worker thread)."""
    key, raw = api_key
    lookups = []
    look_up = auth._authenticate_in_worker
    monkeypatch.setattr(auth, "_authenticate_in_worker", lambda **kw: lookups.append(1) or look_up(**kw))
    found = [await api_key_from_scope(_scope(raw)) for _ in range(3)]
    key_clock[0] += 5
    await api_key_from_scope(_scope(raw))
    assert [k.pk for k in found] == [key.pk] * 3 and len(lookups) == 2


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_key_changed_in_this_process_is_refused_at_once(api_key, key_clock):
    """Saving the key (the admin's change form) or its owner empties the cache: no wait for the bound."""
    key, raw = api_key
    await api_key_from_scope(_scope(raw))
    key.is_active = False
    await sync_to_async(key.save)()
    with pytest.raises(Unauthorized):
        await api_key_from_scope(_scope(raw))
    key.is_active = True
    await sync_to_async(key.save)()
    await api_key_from_scope(_scope(raw))
    key.owner.is_active = False
    await sync_to_async(key.owner.save)()
    with pytest.raises(Unauthorized):
        await api_key_from_scope(_scope(raw))


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_saving_another_user_keeps_the_cached_keys(api_key, make_api_key, key_clock, monkeypatch):
    """A staff login saves its user (last_login): the keys of other users stay cached, that user's are forgotten."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import update_last_login

    _key, raw = api_key
    someone = await sync_to_async(get_user_model().objects.create_user)("someone-else", password="x" * 12)
    other, other_raw = await sync_to_async(make_api_key)(name="other", owner=someone)
    lookups = []
    look_up = auth._authenticate_in_worker
    monkeypatch.setattr(auth, "_authenticate_in_worker", lambda **kw: lookups.append(1) or look_up(**kw))
    for raw_key in (raw, other_raw):
        await api_key_from_scope(_scope(raw_key))
    await sync_to_async(update_last_login)(None, other.owner)
    for raw_key in (raw, other_raw):
        await api_key_from_scope(_scope(raw_key))
    assert len(lookups) == 3  # both once, then only the saved user's key again


def _scope(raw_key: str) -> dict:
    return {"type": "http", "headers": [(b"authorization", f"Bearer {raw_key}".encode())]}


def _call(id_, name, arguments=None, **params):
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, **params}}


# Every kind of answer a stateless tools/call can get: a result, in-band and JSON-RPC errors, the SDK's own
# validation, protocol versions (absent, handshake-era), a progress token, a notification and a batch (both left
# to the SDK), a wrong Accept and Content-Type.
ANSWER_CASES = [
    (ECHO, ()),
    (_call("s-1", "test_echo", {"text": "映画", "count": 2}), ((b"mcp-protocol-version", b"2025-11-25"),)),
    (_call(3, "test_echo", {"text": "x"}), ((b"mcp-protocol-version", b"2025-06-18"),)),
    (_call(4, "test_echo", {"count": "two"}), ()),
    (_call(5, "test_echo", [1]), ()),
    (_call(6, "test_echo"), ()),
    (_call(7, "no_such_tool", {}), ()),
    (_call(8, "test_conflict", {}), ()),
    (_call(9, "test_throttled", {}), ()),
    (_call(10, "test_inband", {}), ()),
    (_call(14, "test_values", {}), ()),
    (_call(15, "test_content_blocks", {}), ()),
    (_call(11, "test_echo", {"text": "x"}, _meta={"progressToken": "p1"}), ()),
    ({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"arguments": {}}}, ()),
    ({"jsonrpc": "2.0", "id": 13, "method": "tools/call"}, ()),
    ({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "test_echo"}}, ()),
    ([ECHO], ()),
    (ECHO, ((b"accept", b"text/html"),)),
    (ECHO, ((b"content-type", b"text/plain"),)),
]


def answer_kind(status: int, body: bytes) -> tuple:
    """What a tools/call answer is, at the wire: (status, "result"), (status, "isError", code or status), (status,
    "error", code), or (status, None) without a JSON-RPC body."""
    try:
        reply = json.loads(body)
    except ValueError:
        return (status, None)
    if "error" in reply:
        return (status, "error", reply["error"]["code"])
    result = reply["result"]
    if result.get("isError"):
        structured = result["structuredContent"]
        return (status, "isError", structured.get("code", structured.get("status")))
    return (status, "result")


# What each of ANSWER_CASES gets: results, in-band errors (the seed's shape in `structuredContent`), protocol errors,
# the SDK's own refusals (a batch, a wrong Accept or Content-Type), nothing for a notification.
ANSWER_KINDS = [
    (200, "result"), (200, "result"), (200, "result"), (200, "isError", -32602), (200, "error", -32602),
    (200, "isError", -32602), (200, "error", -32602), (200, "isError", 409), (200, "error", 429),
    (200, "isError", "error"), (200, "result"), (200, "result"), (200, "result"), (200, "error", -32602),
    (200, "error", -32602), (202, None), (400, "error", -32602), (406, "error", -32600), (400, None),
]  # fmt: skip


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_every_kind_of_tools_call_is_answered_at_the_wire(make_api_key):
    """Each kind of stateless tools/call, through the SDK's own transport: status, and result or error."""
    (_key, raw) = await sync_to_async(make_api_key)(rate="1000/m")
    async with running_site() as app:
        answers = [await request(app, raw, message, headers=headers) for message, headers in ANSWER_CASES]
    assert [answer_kind(status, body) for status, _headers, body in answers] == ANSWER_KINDS
    assert json.loads(answers[1][2])["result"]["structuredContent"] == {"echo": "映画映画", "transport": "http"}
    assert json.loads(answers[11][2])["result"]["content"] == [{"text": "3 seats", "type": "text"}]
    assert all(headers[b"content-type"] == b"application/json" for _status, headers, _body in answers[:18])


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_stateful_sessions_are_capped_per_key(make_api_key, settings):
    """With sessions on (MCP_STATELESS_HTTP=0), one key holds at most MCP_MAX_SESSIONS_PER_KEY; others still open
    theirs, and closing one (DELETE) frees a place."""
    settings.MCP_STATELESS_HTTP = False
    settings.MCP_MAX_SESSIONS_PER_KEY = 2
    make = sync_to_async(make_api_key)
    (_key, raw), (_other, other_raw) = await make(rate="1000/m"), await make(name="other", rate="1000/m")
    async with running_site() as app:
        opened = [await request(app, raw, INITIALIZE) for _ in range(3)]
        other_status, _, _ = await request(app, other_raw, INITIALIZE)
        session_id = opened[0][1][b"mcp-session-id"]
        deleted, _, _ = await request(
            app, raw, None, "DELETE", [(b"mcp-session-id", session_id), (b"mcp-protocol-version", b"2025-11-25")]
        )
        reopened, _, _ = await request(app, raw, INITIALIZE)
    assert [status for status, _, _ in opened] == [200, 200, 429]
    assert "Too many open MCP sessions" in json.loads(opened[2][2])["error"]["message"]
    assert other_status == 200 and deleted == 200 and reopened == 200


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_session_closed_for_idleness_frees_its_place(make_api_key, settings):
    """The SDK closes a session after MCP_SESSION_IDLE_TIMEOUT without requests; the key's count follows, so the
    key is not locked out by sessions that no longer exist."""
    settings.MCP_STATELESS_HTTP = False
    settings.MCP_MAX_SESSIONS_PER_KEY = 1
    settings.MCP_SESSION_IDLE_TIMEOUT = 1
    key, raw = await sync_to_async(make_api_key)(rate="1000/m")
    async with running_site() as app:
        first, _, _ = await request(app, raw, INITIALIZE)
        refused, _, _ = await request(app, raw, INITIALIZE)
        await anyio.sleep(1.5)
        later, _, _ = await request(app, raw, INITIALIZE)
        held = caps.key_sessions.count(key.pk)
    assert (first, refused, later, held) == (200, 429, 200, 1)


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_sessions_are_off_by_default(api_key):
    """Stateless by default: no session id, so any process can answer the next request."""
    _key, raw = api_key
    async with running_site() as app:
        status, headers, _ = await request(app, raw, INITIALIZE)
        call_status, _, body = await request(app, raw, ECHO)
    assert status == 200 and b"mcp-session-id" not in headers
    assert call_status == 200 and json.loads(body)["result"]["structuredContent"]["echo"] == "x"


# --- slow tools do not starve fast ones ------------------------------------------------------------


@pytest.fixture
def stuck_upstream_tool():
    """An upstream-bound tool whose upstream never answers until released (a dead GaluchatAPI)."""
    release, entered = threading.Event(), threading.Semaphore(0)

    def stuck(args, ctx):
        entered.release()
        release.wait(60)
        return {"ok": True}

    register(
        ToolSpec("test_stuck_upstream", "geo", "Waits on a dead upstream", {"type": "object"}, stuck, upstream=True)
    )
    yield release, entered
    release.set()
    unregister("test_stuck_upstream")


@pytest.mark.postgres  # concurrent writers: SQLite's shared-cache test database refuses them ("table is locked")
@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_calls_stuck_on_a_dead_upstream_do_not_starve_other_tenants(make_api_key, stuck_upstream_tool):
    """24 resolve-like calls hang on the upstream; another key's fast call still answers, and the stuck key holds at
    most its MCP_KEY_UPSTREAM_THREADS share of the upstream pool. (All calls shared one 6-thread pool: the fast call
    waited for the upstream.)"""
    from django.conf import settings

    release, entered = stuck_upstream_tool
    make = sync_to_async(make_api_key)
    (attacker, _), (tenant, _) = await make(rate="1000/m"), await make(name="tenant", rate="1000/m")
    attack_ctx = dispatch.call_context(transport="test", api_key=attacker)
    stuck = [asyncio.ensure_future(dispatch.acall_tool(attack_ctx, "test_stuck_upstream", {})) for _ in range(24)]
    try:
        for _ in range(settings.MCP_KEY_UPSTREAM_THREADS):  # the attacker's calls that got a thread
            assert await anyio.to_thread.run_sync(entered.acquire, True, 20)
        tenant_ctx = dispatch.call_context(transport="test", api_key=tenant)
        fast = await asyncio.wait_for(dispatch.acall_tool(tenant_ctx, "test_echo", {"text": "hi"}), 20)
        # The tenant's own upstream-bound call gets a thread too: the attacker holds only its per-key share.
        tenant_stuck = asyncio.ensure_future(dispatch.acall_tool(tenant_ctx, "test_stuck_upstream", {}))
        assert await anyio.to_thread.run_sync(entered.acquire, True, 20)
        assert not entered.acquire(blocking=False)  # no further attacker call is in a thread
    finally:
        release.set()
    results = await asyncio.wait_for(asyncio.gather(*stuck, tenant_stuck), 60)
    assert fast.data == {"echo": "hi", "transport": "test"}
    assert all(result.data == {"ok": True} for result in results)


async def _third_tenant_gets_an_upstream_thread(make_api_key, stuck_upstream_tool) -> bool:
    """Two keys each send 2 x MCP_KEY_CONCURRENCY calls that hang on the upstream; does a third key's upstream-bound
    call reach a thread?"""
    from django.conf import settings

    release, entered = stuck_upstream_tool
    make = sync_to_async(make_api_key)
    keys = [(await make(name=f"tenant{i}", rate="1000/m"))[0] for i in range(3)]
    contexts = [dispatch.call_context(transport="test", api_key=key) for key in keys]
    calls = [
        asyncio.ensure_future(dispatch.acall_tool(ctx, "test_stuck_upstream", {}))
        for ctx in contexts[:2]
        for _ in range(2 * settings.MCP_KEY_CONCURRENCY)
    ]
    try:
        held = min(2 * settings.MCP_KEY_UPSTREAM_THREADS, settings.MCP_UPSTREAM_THREADS)
        for _ in range(held):  # the two keys' calls that got a thread
            assert await anyio.to_thread.run_sync(entered.acquire, True, 20)
        calls.append(asyncio.ensure_future(dispatch.acall_tool(contexts[2], "test_stuck_upstream", {})))
        third_got_through = await anyio.to_thread.run_sync(entered.acquire, True, 3)
    finally:
        release.set()
    results = await asyncio.wait_for(asyncio.gather(*calls), 60)
    assert all(result.data == {"ok": True} for result in results)
    return third_got_through


@pytest.mark.postgres  # concurrent writers (rate counters): SQLite's shared-cache test database refuses them
@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_two_keys_stuck_upstream_leave_a_third_key_its_share_of_the_upstream_pool(
    make_api_key, stuck_upstream_tool
):
    assert await _third_tenant_gets_an_upstream_thread(make_api_key, stuck_upstream_tool)


@pytest.mark.postgres
@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_control_without_an_upstream_share_two_keys_fill_the_pool(make_api_key, stuck_upstream_tool, settings):
    """Each key's upstream calls bounded only by MCP_KEY_CONCURRENCY (as before): 2 x 4 fill the 8 threads."""
    settings.MCP_KEY_UPSTREAM_THREADS = settings.MCP_KEY_CONCURRENCY
    assert settings.MCP_UPSTREAM_THREADS <= 2 * settings.MCP_KEY_CONCURRENCY
    assert not await _third_tenant_gets_an_upstream_thread(make_api_key, stuck_upstream_tool)


@pytest.mark.postgres  # concurrent writers (rate counters): SQLite's shared-cache test database refuses them
@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_key_holds_at_most_its_share_of_threads_over_websockets(make_api_key, stuck_upstream_tool):
    """Six WebSocket connections of one key, each calling a tool stuck on its upstream: MCP_KEY_CONCURRENCY of them
    hold a worker thread, the others wait without one, and all are answered once the upstream is back."""
    from django.conf import settings

    release, entered = stuck_upstream_tool
    _key, raw = await sync_to_async(make_api_key)(rate="1000/m")
    async with running_site() as app:
        scope = {"type": "websocket", "path": "/ws/geo", "headers": [(b"authorization", f"Bearer {raw}".encode())]}
        guarded = RequestGuard(app)
        sockets = [ApplicationCommunicator(guarded, dict(scope)) for _ in range(settings.MCP_KEY_CONCURRENCY + 2)]
        try:
            for n, socket in enumerate(sockets):
                await socket.send_input({"type": "websocket.connect"})
                assert (await socket.receive_output(10))["type"] == "websocket.accept"
                await socket.send_input(
                    {"type": "websocket.receive", "text": json.dumps(_call(n, "test_stuck_upstream", {}))}
                )
            for _ in range(settings.MCP_KEY_CONCURRENCY):
                assert await anyio.to_thread.run_sync(entered.acquire, True, 20)
            await asyncio.sleep(0.5)  # time for a fifth call to enter, were it let through (it must not be)
            assert not entered.acquire(blocking=False)
        finally:
            release.set()
        answers = [json.loads((await socket.receive_output(30))["text"]) for socket in sockets]
        for socket in sockets:
            await socket.send_input({"type": "websocket.disconnect", "code": 1000})
            await socket.wait(5)
    assert [answer["result"] for answer in answers] == [{"ok": True}] * len(sockets)


@pytest.mark.postgres  # concurrent writers (rate counters): SQLite's shared-cache test database refuses them
@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("bounded", [True, False], ids=["capped", "control without the cap"])
async def test_a_key_holds_at_most_its_share_of_threads_over_rpc(make_api_key, stuck_upstream_tool, settings, bounded):
    """Six concurrent `/rpc` requests of one key, each calling a tool stuck on its upstream: MCP_KEY_CONCURRENCY of
    them run, the others wait at the ingress holding no thread, and all are answered once the upstream is back. The
    control lifts the cap: all six run at once."""
    release, entered = stuck_upstream_tool
    settings.MCP_KEY_CONCURRENCY = 4 if bounded else 100
    _key, raw = await sync_to_async(make_api_key)(rate="1000/m")
    requests = 6
    async with running_site() as app:
        scope = {
            "type": "http", "method": "POST", "path": "/rpc", "query_string": b"", "scheme": "http",
            "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5000),
            "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
                        (b"authorization", f"Bearer {raw}".encode())],
        }  # fmt: skip
        posts = []
        for n in range(requests):
            body = json.dumps(_call(n, "test_stuck_upstream", {})).encode()
            headers = [*scope["headers"], (b"content-length", str(len(body)).encode())]
            post = ApplicationCommunicator(RequestGuard(app), {**scope, "headers": headers})
            await post.send_input({"type": "http.request", "body": body})
            posts.append(post)
        try:
            running = 0
            while await anyio.to_thread.run_sync(entered.acquire, True, 5):
                running += 1
        finally:
            release.set()
        starts = [await post.receive_output(30) for post in posts]
        answers = [json.loads((await post.receive_output(30))["body"]) for post in posts]
    assert running == (4 if bounded else requests)
    assert [start["status"] for start in starts] == [200] * requests
    assert [answer["result"] for answer in answers] == [{"ok": True}] * requests


# --- the deferred audit ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_deferred_audit_rows_wait_at_most_the_buffer(call_tool, settings):
    """Rows wait in the buffer, never more than MCP_AUDIT_BUFFER_ROWS of them, and all arrive when it flushes."""
    settings.MCP_AUDIT_FLUSH_SECONDS = 3600  # no timed flush during the test
    settings.MCP_AUDIT_BUFFER_ROWS = 5
    pending = []
    for _ in range(12):
        call_tool("test_echo", {"text": "x"})
        pending.append(audit.audit_buffer.pending())
    assert max(pending) < 5 and ToolCall.objects.count() == 10  # two full buffers written by the calls that filled them
    assert audit.audit_buffer.flush() == 2
    assert ToolCall.objects.filter(tool="test_echo", outcome="ok").count() == 12


def test_audit_rows_wait_out_a_database_outage_within_the_retention(call_tool, settings, monkeypatch, caplog):
    """Rows the database could not take are kept and written when it answers again (one log line per outage);
    past MCP_AUDIT_RETAIN_ROWS the oldest are dropped. Control: another failure drops the batch, as before."""
    from django.db import OperationalError

    settings.MCP_AUDIT_FLUSH_SECONDS = 3600
    settings.MCP_AUDIT_BUFFER_ROWS = 100
    settings.MCP_AUDIT_RETAIN_ROWS = 3
    real_insert = audit.insert_rows

    def down(*_args):
        raise OperationalError("the database system is shutting down")

    monkeypatch.setattr(audit, "insert_rows", down)
    for n in range(4):
        call_tool("test_echo", {"text": str(n)})
        assert audit.audit_buffer.flush() == 0
    assert audit.audit_buffer.pending() == 3  # the oldest one dropped
    assert len([r for r in caplog.records if "dependency is unavailable" in r.getMessage()]) == 1
    monkeypatch.setattr(audit, "insert_rows", real_insert)
    assert audit.audit_buffer.flush() == 3 and ToolCall.objects.filter(tool="test_echo").count() == 3

    def broken(*_args):
        raise ValueError("not an outage")

    monkeypatch.setattr(audit, "insert_rows", broken)
    call_tool("test_echo", {"text": "lost"})
    audit.audit_buffer.flush()
    assert audit.audit_buffer.pending() == 0 and ToolCall.objects.filter(tool="test_echo").count() == 3


# --- several processes and hosts (real uvicorn processes) ----------------------------------------


def run(coro_fn):
    return anyio.run(coro_fn)


async def echo_session(session):
    tools = await session.list_tools()
    result = await session.call_tool("test_echo", {"text": "映画"})
    return len(tools.tools), result.structured_content


def sessions(url: str, key: str, count: int) -> list:
    """`count` official-client sessions (initialize, tools/list, tools/call); each an outcome or the exception."""

    async def all_of_them():
        outcomes = []
        for _ in range(count):
            try:
                outcomes.append(await mcp_session(url, key, echo_session))
            except Exception as exc:  # the failure the test counts
                outcomes.append(exc)
        return outcomes

    return run(all_of_them)


@pytest.mark.slow
def test_three_worker_processes_serve_every_official_client_session(live_template, tmp_path):
    """`uvicorn --workers 3` after `migrate` alone: 12 of 12 sessions failed with 'Session not found'."""
    with live_site(live_template, tmp_path) as site:
        url = site.start_server(workers=3)
        outcomes = sessions(f"{url}/mcp", site.key, 12)
    failures = [o for o in outcomes if isinstance(o, Exception)]
    assert failures == [] and all(o[1] == {"echo": "映画", "transport": "http"} for o in outcomes)


@pytest.mark.slow
def test_two_servers_behind_an_alternating_proxy(live_template, tmp_path):
    """Two server processes (as on two hosts) behind a proxy that alternates per request: every session works, and
    a key's rate is exact across both (10/min: 10 calls answered, the rest refused)."""
    with live_site(live_template, tmp_path) as site:
        backends = [site.start_server(), site.start_server()]
        proxy = AlternatingProxy(backends)
        with proxy as proxy_url:
            outcomes = sessions(f"{proxy_url}/mcp", site.key, 6)
            limited_key, limited_pk = site.create_api_key("limited", "--scopes", "all", "--rate", "10/m")

            async def burst():
                headers = {"Authorization": f"Bearer {limited_key}", "Accept": "application/json, text/event-stream"}
                async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                    return [(await http.post(f"{proxy_url}/mcp", json=ECHO)).json() for _ in range(14)]

            answers = run(burst)
    assert min(proxy.sent) >= 10  # both servers answered (the proxy alternates every request)
    failures = [o for o in outcomes if isinstance(o, Exception)]
    assert failures == [] and all(o[1]["echo"] == "映画" for o in outcomes)
    refused = [a for a in answers if "error" in a]
    assert len(answers) - len(refused) == 10
    assert all(a["error"]["code"] == 429 for a in refused)


@pytest.mark.slow
def test_a_killed_process_loses_at_most_the_audit_buffer(live_template, tmp_path):
    """kill -9 of a server loses only the rows still buffered: at most MCP_AUDIT_BUFFER_ROWS (here 5 of 12 calls
    with no timed flush: the 10 that filled two buffers were written), and none once the timed flush has run."""
    with live_site(live_template, tmp_path) as site:
        url = site.start_server(MCP_AUDIT_FLUSH_SECONDS="3600", MCP_AUDIT_BUFFER_ROWS="5")
        headers = {"Authorization": f"Bearer {site.key}", "Accept": "application/json, text/event-stream"}
        for _ in range(12):
            assert "result" in httpx2.post(f"{url}/mcp", json=ECHO, headers=headers, timeout=30).json()
        site.processes[-1].kill()
        site.processes[-1].wait(10)
        after_kill = site.count("mcpsite_toolcall", tool="test_echo")

        url = site.start_server(MCP_AUDIT_FLUSH_SECONDS="0.2")
        for _ in range(3):
            httpx2.post(f"{url}/mcp", json=ECHO, headers=headers, timeout=30)
        flushed = 0
        for _ in range(100):  # the flush interval is 0.2 s; allow the slowest machine 20 s
            flushed = site.count("mcpsite_toolcall", tool="test_echo") - after_kill
            if flushed == 3:
                break
            anyio.run(anyio.sleep, 0.2)
        site.processes[-1].kill()
    assert after_kill == 10
    assert flushed == 3


def test_production_settings_pass_check_deploy(tmp_path):
    """`manage.py check --deploy` reports nothing, not even a warning, for docs/production.md's environment
    (PostgreSQL, Redis, SMTP) with the HTTPS lines of docs/security.md."""
    import subprocess

    from .live import PYTHON, ROOT
    from .test_security_settings import PRODUCTION_ENV

    env = {
        **PRODUCTION_ENV, "PATH": "/usr/bin:/bin", "MCPSITE_VAR_DIR": str(tmp_path),
        "DATABASE_URL": "postgres://mcpsite@127.0.0.1:1/mcpsite", "REDIS_URL": "redis://127.0.0.1:1/0",
    }  # fmt: skip
    done = subprocess.run(
        [PYTHON, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout
