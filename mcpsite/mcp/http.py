"""MCP Streamable HTTP at `/mcp` (every group the key may use) and `/mcp/<group>`.

An ASGI app around the SDK's `StreamableHTTPSessionManager`: it authenticates the API key, counts every
request against the key's rate, records the key in the ASGI scope for the tool handlers, and (stateful mode
only) binds each MCP session to the key that opened it and caps the sessions one key may hold open.

Stateless by default (settings.MCP_STATELESS_HTTP): any process or host answers any request; the README's
"Production" section says which MCP features that covers.
"""

from __future__ import annotations

import contextlib
import json

from django.conf import settings
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from . import dispatch
from .auth import api_key_from_scope
from .errors import RateLimited, ServiceUnavailable, ToolError, Unauthorized
from .jsonutil import dumps
from .limits import api_key_retry_after, enforce_api_key_rate
from .registry import GROUPS, CallContext
from .server import build_server

SCOPE_KEY = "mcpsite.api_key"
SCOPE_GROUPS = "mcpsite.groups"
# Counted (and audited) by the dispatcher; every other MCP request is counted here.
DISPATCH_COUNTED = frozenset({"tools/call", "tools/list"})


def mcp_groups_for_path(path: str) -> list[str] | None | bool:
    """None for `/mcp` (all groups), [group] for `/mcp/<group>`, False when the path is not ours."""
    path = path.rstrip("/") or "/"
    if path == "/mcp":
        return None
    prefix, _, group = path.rpartition("/")
    if prefix == "/mcp" and group in GROUPS:
        return [group]
    return False


def _security_settings() -> TransportSecuritySettings:
    """DNS-rebinding protection tied to ALLOWED_HOSTS (any port), same-host origins only."""
    hosts, origins = [], []
    for host in settings.ALLOWED_HOSTS:
        if host == "*":
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        host = host.lstrip(".")
        hosts += [host, f"{host}:*"]
        origins += [f"http://{host}", f"https://{host}", f"http://{host}:*", f"https://{host}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def _context_from_request(ctx) -> tuple[CallContext, list[str] | None]:
    scope = ctx.request.scope
    return dispatch.call_context(transport="http", api_key=scope.get(SCOPE_KEY)), scope.get(SCOPE_GROUPS)


async def _send_json(send, status: int, body: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:
    payload = dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


async def buffer_body(receive, limit: int):
    """Read the request body (up to `limit` + 1 bytes) and return it with a `receive` that replays it; the SDK
    then reads the same messages and applies its own size limit."""
    messages, size = [], 0
    while size <= limit:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")

    async def replay():
        return messages.pop(0) if messages else await receive()

    return body, replay


def _jsonrpc_method(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message.get("method") if isinstance(message, dict) else None


class McpHttpApp:
    def __init__(self) -> None:
        # Resource subscriptions need a session to notify: stateful mode only.
        self.server = build_server(_context_from_request, subscriptions=not settings.MCP_STATELESS_HTTP)
        self.manager = StreamableHTTPSessionManager(
            app=self.server,
            stateless=settings.MCP_STATELESS_HTTP,
            json_response=settings.MCP_JSON_RESPONSE,
            security_settings=_security_settings(),
            max_request_body_size=settings.MCP_MAX_BODY_BYTES,
            max_sessions=settings.MCP_MAX_SESSIONS,
            session_idle_timeout=settings.MCP_SESSION_IDLE_TIMEOUT,
        )
        self.running = False

    @contextlib.asynccontextmanager
    async def lifespan(self):
        async with self.manager.run():
            self.running = True
            try:
                yield
            finally:
                self.running = False
                # A normal stop writes the audit rows still buffered (a kill -9 loses them: see AuditBuffer).
                if dispatch.audit_buffer.pending():
                    await dispatch.in_worker_thread(dispatch.audit_buffer.flush)()

    async def __call__(self, scope, receive, send) -> None:
        if not self.running:
            # The SDK's session manager runs in the ASGI lifespan; a server started without it cannot serve MCP.
            error = ServiceUnavailable(data="The MCP transport needs the ASGI lifespan (uvicorn --lifespan on)")
            await self._refuse(send, error)
            return
        groups = mcp_groups_for_path(scope["path"])
        try:
            api_key = await api_key_from_scope(scope)
        except ToolError as exc:
            await self._refuse(send, exc)
            return
        if api_key is not None:
            receive = await self._count_request(scope, receive, send, api_key)
            if receive is None:
                return
        scope = dict(scope)
        scope[SCOPE_KEY], scope[SCOPE_GROUPS] = api_key, groups
        if api_key is not None:
            # Sessions are bound to this principal by the SDK.
            token = AccessToken(token=api_key.digest, client_id=f"apikey:{api_key.pk}", scopes=list(api_key.scopes))
            scope["user"] = AuthenticatedUser(token)
            if self._session_cap_reached(scope):
                error = RateLimited("Too many open MCP sessions for this API key; close one (DELETE) or wait")
                await self._refuse(send, error)
                return
        await self.manager.handle_request(scope, receive, send)

    async def _count_request(self, scope, receive, send, api_key):
        """Count this request against the key's rate, so `initialize`, pings, notifications and stream GETs are
        bounded like tool calls (an uncounted `initialize` let one key open thousands of sessions). tools/call and
        tools/list are counted by the dispatcher, which also audits them. Returns the `receive` to pass on (the body
        read here is replayed), or None when the request was refused."""
        body, receive = await buffer_body(receive, settings.MCP_MAX_BODY_BYTES)
        if _jsonrpc_method(body) in DISPATCH_COUNTED:
            return receive
        try:
            await dispatch.in_worker_thread(enforce_api_key_rate)(api_key)
        except RateLimited as exc:
            retry_after = await dispatch.in_worker_thread(api_key_retry_after)(api_key)
            await self._refuse(send, exc, [(b"retry-after", str(retry_after).encode())] if retry_after else [])
            return None
        return receive

    def _session_cap_reached(self, scope) -> bool:
        """True when this request would open a stateful session and its key already holds
        MCP_MAX_SESSIONS_PER_KEY of them (the SDK's own cap is global, so one key could take every slot)."""
        if self.manager.stateless or scope["method"] != "POST":
            return False
        if any(name == MCP_SESSION_ID_HEADER.encode() for name, _ in scope["headers"]):
            return False
        requestor = authorization_context(scope["user"])
        # The SDK keeps each open session's owner here (private, no public accessor in mcp 2.3).
        owners = self.manager._session_owners.values()
        return sum(1 for owner in owners if owner == requestor) >= settings.MCP_MAX_SESSIONS_PER_KEY

    @staticmethod
    async def _refuse(send, error: ToolError, extra: list[tuple[bytes, bytes]] | None = None) -> None:
        extra = list(extra or [])
        if isinstance(error, Unauthorized):
            extra.append((b"www-authenticate", b'Bearer realm="mcpsite"'))
        body = {"jsonrpc": "2.0", "id": None, "error": error.as_jsonrpc()}
        await _send_json(send, error.http_status, body, extra)
