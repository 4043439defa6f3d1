"""MCP Streamable HTTP at `/mcp` (every group the key may use) and `/mcp/<group>`, behind the ingress.

An ASGI app around the SDK's `StreamableHTTPSessionManager`, one per protocol era. The ingress (mcpsite.guard) has
checked the host, read and bounded the body and resolved the principal; here the request is counted (the ingress's
Admission: a plain call first in its worker thread, any other request before the SDK sees it), the principal becomes
the SDK's authenticated user (sessions are bound to it), the whitespace around `Mcp-*` header values is trimmed, and
the per-key caps of the process apply (caps.py): `subscriptions/listen` streams, and stateful sessions.

2026-07-28 requests (an `MCP-Protocol-Version` that names no handshake revision) go to a stateless manager in SSE
mode: a reply is JSON unless its handler notifies (progress), and a listen stream is SSE. 2025-11-25 requests go
to the manager configured by MCP_STATELESS_HTTP / MCP_JSON_RESPONSE (stateless JSON by default, where any process
or host answers any request; with sessions on, a session lives in the process that opened it, so requests need
affinity: scripts/serve-balanced). docs/production.md says which MCP features each revision covers.

A plain `tools/call` of either revision is answered before the managers, by direct.py (decision 0016), with the same
pipeline and the SDK's answer.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Literal

from django.conf import settings
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcpsite.core import metrics
from mcpsite.core.errors import RateLimited, ServiceUnavailable
from mcpsite.core.scopes import ServerInfo

from . import audit, caps, dispatch, idempotency, jsonrpc, registry, threads
from .auth import SCOPE_PRINCIPAL
from .direct import DirectCalls
from .refusals import refusing, send_refusal
from .registry import CallContext, tool_groups
from .server import build_server

# Where the ingress (mcpsite.guard) leaves the endpoint's groups (None: every group).
SCOPE_GROUPS = "mcpsite.groups"
# The request's Idempotency-Key, and whether its call was a replay (idempotency.py).
SCOPE_IDEMPOTENCY = "mcpsite.idempotency"


def mcp_groups_for_path(path: str) -> list[str] | None | Literal[False]:
    """None for `/mcp` (all groups), [group] for `/mcp/<group>`, False when the path is not ours."""
    path = path.rstrip("/") or "/"
    if path == "/mcp":
        return None
    prefix, _, group = path.rpartition("/")
    if prefix == "/mcp" and group in tool_groups():
        return [group]
    return False


def _security_settings() -> TransportSecuritySettings:
    """DNS-rebinding protection tied to ALLOWED_HOSTS (any port): same-host origins and CORS_ALLOWED_ORIGINS."""
    hosts, origins = [], []
    for host in settings.ALLOWED_HOSTS:
        if host == "*":
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        host = host.lstrip(".")
        hosts += [host, f"{host}:*"]
        origins += [f"http://{host}", f"https://{host}", f"http://{host}:*", f"https://{host}:*"]
    origins += settings.CORS_ALLOWED_ORIGINS  # the pages mcpsite/cors.py lets call in
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def _context_from_request(ctx) -> tuple[CallContext, list[str] | None]:
    return _context_of(ctx.request.scope)


def _context_of(scope) -> tuple[CallContext, list[str] | None]:
    """The transport's context of a request (its principal, its idempotency key) and its endpoint's groups: the
    context the ingress counted the request in, so a request has one id in its refusal, its call and its audit."""
    admission = scope.get(dispatch.SCOPE_ADMISSION)
    call_ctx = (
        admission.ctx
        if admission is not None
        else dispatch.call_context(transport="http", api_key=scope.get(SCOPE_PRINCIPAL))
    )
    if (keys := scope.get(SCOPE_IDEMPOTENCY)) is not None:
        call_ctx = dataclasses.replace(call_ctx, idempotency=keys)
    return call_ctx, scope.get(SCOPE_GROUPS)


async def _body(scope, receive) -> bytes:
    """The body the ingress read (it replays it as one message); a GET or DELETE has none."""
    if scope["method"] != "POST":
        return b""
    message = await receive()
    return message.get("body", b"") if message["type"] == "http.request" else b""


def replay(body: bytes, receive):
    """`receive` with `body` given first as one message, then the real channel (so a stream still sees the client
    disconnect)."""
    sent = False

    async def replayed():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def buffer_body(receive, limit: int):
    """Read a request body (up to `limit` + 1 bytes) and return it with a `receive` that replays it."""
    chunks, size, more = [], 0, True
    while more and size <= limit:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = message.get("more_body", False)
    body = b"".join(chunks)
    return body, replay(body, receive)


def _jsonrpc_method(scope) -> str | None:
    """The method of a single JSON-RPC message, as the ingress parsed it; None for anything else, unreadable JSON
    included (the SDK answers that with its parse error)."""
    message = scope.get(jsonrpc.SCOPE_JSON)
    return message.get("method") if isinstance(message, dict) else None


def is_modern_request(scope) -> bool:
    """A request of a per-request-envelope revision (2026-07-28): its MCP-Protocol-Version names no handshake
    revision. The SDK's session manager routes on the same rule; anything it cannot place goes there too, to be told
    which versions are served."""
    version = next((v for k, v in scope["headers"] if k == _VERSION_HEADER), None)
    return version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS


_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode()
_SESSION_HEADER = MCP_SESSION_ID_HEADER.lower().encode()
_OWS = b" \t"


def _trim_mcp_headers(scope) -> dict:
    """`scope` with the optional whitespace around each `Mcp-*` header value removed (RFC 9110 §5.5: a field value
    excludes it; some HTTP parsers keep it), so `Mcp-Name:  tool ` matches the body's `tool`."""
    headers = scope["headers"]
    if not any(k.startswith(b"mcp-") and v != v.strip(_OWS) for k, v in headers):
        return scope
    trimmed = [(k, v.strip(_OWS) if k.startswith(b"mcp-") else v) for k, v in headers]
    return {**scope, "headers": trimmed}


class McpHttpApp:
    def __init__(self, info: ServerInfo | None = None) -> None:
        """`info`: the serverInfo this app's endpoints state (the site's by default)."""
        # Resource subscriptions need a session to notify: stateful mode only.
        self.server = build_server(_context_from_request, subscriptions=not settings.MCP_STATELESS_HTTP, info=info)
        security = _security_settings()
        common: dict[str, Any] = {
            "app": self.server,
            "security_settings": security,
            # The ingress bounds each endpoint's bodies; the SDK's own bound is the largest of them.
            "max_request_body_size": registry.max_request_bytes(),
        }
        # 2025-11-25 (initialize, sessions where configured).
        self.manager = StreamableHTTPSessionManager(
            stateless=settings.MCP_STATELESS_HTTP,
            json_response=settings.MCP_JSON_RESPONSE,
            max_sessions=settings.MCP_MAX_SESSIONS,
            session_idle_timeout=settings.MCP_SESSION_IDLE_TIMEOUT,
            **common,
        )
        # 2026-07-28: sessionless by definition; SSE mode by default, so a call that notifies (progress) answers on
        # its own stream and one that does not still gets a JSON body.
        self.modern_manager = StreamableHTTPSessionManager(
            stateless=True, json_response=settings.MCP_MODERN_JSON_RESPONSE, **common
        )
        # The plain calls (direct.py, decision 0016).
        self.direct = DirectCalls(
            self.server,
            TransportSecurityMiddleware(security),
            legacy_json=settings.MCP_STATELESS_HTTP and settings.MCP_JSON_RESPONSE,
            modern_json=settings.MCP_MODERN_JSON_RESPONSE,
            context_of=_context_of,
        )
        self.running = False

    @contextlib.asynccontextmanager
    async def lifespan(self):
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(self.manager.run())
            await stack.enter_async_context(self.modern_manager.run())
            self.running = True
            try:
                yield
            finally:
                self.running = False
                # A normal stop writes the audit rows still buffered (a kill -9 loses them: see AuditBuffer).
                if audit.audit_buffer.pending():
                    await threads.in_worker_thread(audit.audit_buffer.flush)()

    async def __call__(self, scope, receive, send) -> None:
        """Serve one request that passed the ingress (mcpsite.guard: host, body, principal, accounting)."""
        if not self.running:
            # The SDK's session manager runs in the ASGI lifespan; a server started without it cannot serve MCP.
            error = ServiceUnavailable(data="The MCP transport needs the ASGI lifespan (uvicorn --lifespan on)")
            await send_refusal(send, error)
            return
        if SCOPE_PRINCIPAL not in scope:  # never served without the ingress, which authenticates
            await send_refusal(send, ServiceUnavailable(data="The MCP transport is served behind mcpsite.guard"))
            return
        api_key = scope[SCOPE_PRINCIPAL]
        scope = dict(_trim_mcp_headers(scope))
        # The request's key (its tools/call may bring one in params too): a replay is marked on the response.
        keys = scope[SCOPE_IDEMPOTENCY] = idempotency.IdempotencyKey(idempotency.header_value(scope["headers"]))
        send = refusing(idempotency.marking_replays(send, keys), scope)
        body = await _body(scope, receive)
        receive = replay(body, receive)
        modern = is_modern_request(scope)
        if await self.direct.answer(scope, send, modern=modern):  # counted in the call's worker thread
            return
        if (admission := scope.get(dispatch.SCOPE_ADMISSION)) is not None:
            await admission.atake()  # before the SDK acts on the request; NotAdmitted is the ingress's to answer
        if api_key is not None:
            # Sessions are bound to this principal by the SDK.
            token = AccessToken(token=api_key.digest, client_id=f"apikey:{api_key.pk}", scopes=list(api_key.scopes))
            scope["user"] = AuthenticatedUser(token)
            if self._session_cap_reached(scope, api_key.pk):
                metrics.rate_limited("sessions")
                too_many = RateLimited("Too many open MCP sessions for this API key; close one (DELETE) or wait")
                await send_refusal(send, too_many)
                return
        if not modern:
            if self.manager.stateless or api_key is None:
                await self.manager.handle_request(scope, receive, send)
            else:
                await caps.key_sessions.serve(api_key.pk, scope, self.manager.handle_request, receive, send)
        elif api_key is not None and _jsonrpc_method(scope) == "subscriptions/listen":
            try:
                with caps.listen_streams.hold(api_key.pk):
                    await self.modern_manager.handle_request(scope, receive, send)
            except RateLimited as exc:
                await send_refusal(send, exc)
        else:
            await self.modern_manager.handle_request(scope, receive, send)

    def _session_cap_reached(self, scope, key_pk: int) -> bool:
        """True when this request would open a stateful session and its key already holds
        MCP_MAX_SESSIONS_PER_KEY of them (the SDK's own cap is global, so one key could take every slot)."""
        if self.manager.stateless or scope["method"] != "POST" or is_modern_request(scope):
            return False
        if any(name == _SESSION_HEADER for name, _ in scope["headers"]):
            return False
        return caps.key_sessions.count(key_pk) >= settings.MCP_MAX_SESSIONS_PER_KEY
