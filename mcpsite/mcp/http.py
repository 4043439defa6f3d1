"""MCP Streamable HTTP at `/mcp` (every group the key may use) and `/mcp/<group>`.

An ASGI app around the SDK's `StreamableHTTPSessionManager`: it authenticates the API key, counts every
request against the key's rate, records the key in the ASGI scope for the tool handlers, and (stateful mode
only) binds each MCP session to the key that opened it and caps the sessions one key may hold open.

Stateless by default (settings.MCP_STATELESS_HTTP): any process or host answers any request; the README's
"Production" section says which MCP features that covers.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import pydantic_core
from django.conf import settings
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.auth.provider import AccessToken
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import CONTENT_TYPE_JSON, MCP_SESSION_ID_HEADER, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data, progress_token_from_params
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from mcpsite.core.errors import ApplicationError, ParseError, RateLimited, ServiceUnavailable, Unauthorized
from mcpsite.core.jsonutil import dumps
from mcpsite.core.limits import api_key_retry_after, enforce_api_key_rate
from mcpsite.core.scopes import ServerInfo

from . import dispatch, jsonrpc
from .auth import api_key_from_scope, bearer_challenge, endpoint_scope_denied
from .registry import CallContext, tool_groups
from .server import build_server
from .wire import as_jsonrpc, http_status

logger = logging.getLogger("mcpsite.mcp")

SCOPE_KEY = "mcpsite.api_key"
SCOPE_GROUPS = "mcpsite.groups"
# Counted (and audited) by the dispatcher; every other MCP request is counted here.
DISPATCH_COUNTED = frozenset({"tools/call", "tools/list"})


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


async def _send_json(send, status: int, body: dict, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
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
    """The method of a single JSON-RPC message; None for anything else, unreadable or too deeply nested JSON
    included (the SDK answers those with its parse error)."""
    try:
        message = jsonrpc.parse(body)
    except ParseError:
        return None
    return message.get("method") if isinstance(message, dict) else None


@dataclass
class _OneCallContext:
    """The SDK's per-request dispatch context for a stateless JSON-response call: no back channel (as the SDK's own
    stateless transport says, `can_send_request=False`), and notifications have no wire in JSON-response mode, so
    they are dropped as the SDK's transport drops them."""

    transport: TransportContext
    request_id: RequestId
    message_metadata: ServerMessageMetadata
    progress_token: Any = None
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = field(default=False, init=False)

    async def send_raw_request(self, method: str, params: Mapping[str, Any] | None, opts=None) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts=None) -> None:
        return None

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None


async def _direct_call_request(scope, body: bytes, security: TransportSecurityMiddleware) -> JSONRPCRequest | None:
    """The `tools/call` request of a POST the SDK's stateless JSON-response transport would dispatch without
    complaint (same checks, same parser, same message model); None for anything else, which the SDK answers."""
    request = Request(scope)
    version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
    if scope["method"] != "POST" or (version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS):
        return None
    content_type = request.headers.get("content-type", "")
    if not any(part.strip() == CONTENT_TYPE_JSON for part in content_type.split(";")[0].split(",")):
        return None
    if not check_accept_headers(request)[0] or await security.validate_request(request, is_post=True) is not None:
        return None
    try:
        message = jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body), by_name=False)
    except (ValueError, ValidationError):
        return None
    if not isinstance(message, JSONRPCRequest) or message.method != "tools/call":
        return None
    return message


class McpHttpApp:
    def __init__(self, info: ServerInfo | None = None) -> None:
        """`info`: the serverInfo this app's endpoints state (the site's by default)."""
        # Resource subscriptions need a session to notify: stateful mode only.
        self.server = build_server(_context_from_request, subscriptions=not settings.MCP_STATELESS_HTTP, info=info)
        self.manager = StreamableHTTPSessionManager(
            app=self.server,
            stateless=settings.MCP_STATELESS_HTTP,
            json_response=settings.MCP_JSON_RESPONSE,
            security_settings=_security_settings(),
            max_request_body_size=settings.MCP_MAX_BODY_BYTES,
            max_sessions=settings.MCP_MAX_SESSIONS,
            session_idle_timeout=settings.MCP_SESSION_IDLE_TIMEOUT,
        )
        self.security = TransportSecurityMiddleware(self.manager.security_settings)
        # Stateless JSON-response `tools/call` skips the SDK's per-request transport, session and task group (a
        # third of the event loop's time per call, bench/bench_serving.py) for the SDK's own request kernel.
        self.direct_tools_call = self.manager.stateless and self.manager.json_response
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
            if denied := endpoint_scope_denied(api_key, groups or None):
                raise denied
        except ApplicationError as exc:
            await self._refuse(send, exc, [(b"www-authenticate", bearer_challenge(scope, exc, groups or None))])
            return
        body, receive = await buffer_body(receive, settings.MCP_MAX_BODY_BYTES)
        if api_key is not None and not await self._count_request(body, send, api_key):
            return
        scope = dict(scope)
        scope[SCOPE_KEY], scope[SCOPE_GROUPS] = api_key, groups
        if api_key is not None:
            # Sessions are bound to this principal by the SDK.
            token = AccessToken(token=api_key.digest, client_id=f"apikey:{api_key.pk}", scopes=list(api_key.scopes))
            scope["user"] = AuthenticatedUser(token)
            if self._session_cap_reached(scope):
                too_many = RateLimited("Too many open MCP sessions for this API key; close one (DELETE) or wait")
                await self._refuse(send, too_many)
                return
        if self.direct_tools_call and len(body) <= settings.MCP_MAX_BODY_BYTES:
            message = await _direct_call_request(scope, body, self.security)
            if message is not None:
                await self._answer_tools_call(scope, message, receive, send)
                return
        await self.manager.handle_request(scope, receive, send)

    async def _answer_tools_call(self, scope, message: JSONRPCRequest, receive, send) -> None:
        """What the SDK's stateless JSON-response transport answers to one `tools/call`, without its per-request
        machinery: the same kernel (`serve_one`: the server's middleware, parameter validation, our handler, result
        serialisation) on a born-ready connection at the header's protocol version, the same exception-to-error
        mapping, the same JSON body and headers. tests/test_serving.py compares the two answer for answer."""
        request = Request(scope, receive)
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER) or DEFAULT_NEGOTIATED_VERSION
        context = _OneCallContext(
            transport=TransportContext(kind="streamable-http", can_send_request=False),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
            progress_token=progress_token_from_params(message.params),
        )
        connection = Connection.from_envelope(version, None, None)
        try:
            result = await serve_one(
                self.server, context, message.method, message.params,
                connection=connection, lifespan_state=self.manager._lifespan_state,
            )  # fmt: skip
            reply: JSONRPCResponse | JSONRPCError = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:  # the SDK's dispatcher answers code 0 with the message (mcp 2.3)
                logger.exception("handler for %r raised", message.method)
                error = ErrorData(code=0, message=str(exc))
            reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        response = Response(
            reply.model_dump_json(by_alias=True, exclude_unset=True), headers={"Content-Type": CONTENT_TYPE_JSON}
        )
        await response(scope, receive, send)

    async def _count_request(self, body: bytes, send, api_key) -> bool:
        """Count this request against the key's rate, so `initialize`, pings, notifications and stream GETs are
        bounded like tool calls (an uncounted `initialize` let one key open thousands of sessions). tools/call and
        tools/list are counted by the dispatcher, which also audits them. False when the request was refused."""
        if _jsonrpc_method(body) in DISPATCH_COUNTED:
            return True
        try:
            await dispatch.in_worker_thread(enforce_api_key_rate)(api_key)
        except RateLimited as exc:
            retry_after = await dispatch.in_worker_thread(api_key_retry_after)(api_key)
            await self._refuse(send, exc, [(b"retry-after", str(retry_after).encode())] if retry_after else [])
            return False
        return True

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
    async def _refuse(send, error: ApplicationError, extra: list[tuple[bytes, bytes]] | None = None) -> None:
        extra = list(extra or [])
        if isinstance(error, Unauthorized) and not any(name == b"www-authenticate" for name, _ in extra):
            extra.append((b"www-authenticate", b'Bearer realm="mcpsite"'))
        body = {"jsonrpc": "2.0", "id": None, "error": as_jsonrpc(error)}
        await _send_json(send, http_status(error), body, extra)
