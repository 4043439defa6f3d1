"""MCP Streamable HTTP at `/mcp` (every group the key may use) and `/mcp/<group>`.

An ASGI app around the SDK's `StreamableHTTPSessionManager`, one per protocol era: it authenticates the API key,
counts every request against the key's rate, records the key in the ASGI scope for the tool handlers, trims the
whitespace around `Mcp-*` header values, caps the `subscriptions/listen` streams one key may hold open, and
(stateful mode only) binds each MCP session to the key that opened it and caps the sessions one key may hold.

2026-07-28 requests (an `MCP-Protocol-Version` that names no handshake revision) go to a stateless manager in SSE
mode: a reply is JSON unless its handler notifies (progress), and a listen stream is SSE. 2025-11-25 requests go
to the manager configured by MCP_STATELESS_HTTP / MCP_JSON_RESPONSE (stateless JSON by default). Either way any
process or host answers any request; docs/production.md says which MCP features each revision covers.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import orjson
import pydantic_core
from django.conf import settings
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.connection import Connection
from mcp.server.context import CallNext, ServerMiddleware, ServerRequestContext
from mcp.server.runner import modern_error_data, serve_one
from mcp.server.session import ServerSession
from mcp.server.streamable_http import CONTENT_TYPE_JSON, MCP_SESSION_ID_HEADER, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
    x_mcp_header_map,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data, progress_token_from_params
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    DEFAULT_NEGOTIATED_VERSION,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    RequestParams,
    RequestParamsMeta,
    jsonrpc_message_adapter,
)
from mcp_types.methods import serialize_server_result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from mcpsite.core import metrics
from mcpsite.core.errors import ApplicationError, ParseError, RateLimited, ServiceUnavailable, Unauthorized
from mcpsite.core.jsonutil import dumps
from mcpsite.core.limits import api_key_retry_after, enforce_api_key_rate
from mcpsite.core.scopes import ServerInfo
from mcpsite.tracing import recording

from . import dispatch, jsonrpc, registry
from .auth import api_key_from_scope, bearer_challenge, endpoint_scope_denied
from .registry import CallContext, tool_groups
from .server import build_server, tool_call_result
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


def _is_json_post(request: Request) -> bool:
    """A POST with a JSON body, as the SDK's transports check it."""
    content_type = request.headers.get("content-type", "")
    return request.method == "POST" and any(
        part.strip() == CONTENT_TYPE_JSON for part in content_type.split(";")[0].split(",")
    )


async def _direct_call_request(scope, body: bytes, security: TransportSecurityMiddleware) -> JSONRPCRequest | None:
    """The `tools/call` request of a POST the SDK's stateless JSON-response transport would dispatch without
    complaint (same checks, same parser, same message model); None for anything else, which the SDK answers."""
    request = Request(scope)
    version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
    if scope["method"] != "POST" or (version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS):
        return None
    if not _is_json_post(request):
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


def is_modern_request(scope) -> bool:
    """A request of a per-request-envelope revision (2026-07-28): its MCP-Protocol-Version names no handshake
    revision. The SDK's session manager routes on the same rule; anything it cannot place goes there too, to be told
    which versions are served."""
    version = next((v for k, v in scope["headers"] if k == _VERSION_HEADER), None)
    return version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS


_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode()
_OWS = b" \t"


def _trim_mcp_headers(scope) -> dict:
    """`scope` with the optional whitespace around each `Mcp-*` header value removed (RFC 9110 §5.5: a field value
    excludes it; some HTTP parsers keep it), so `Mcp-Name:  tool ` matches the body's `tool`."""
    headers = scope["headers"]
    if not any(k.startswith(b"mcp-") and v != v.strip(_OWS) for k, v in headers):
        return scope
    trimmed = [(k, v.strip(_OWS) if k.startswith(b"mcp-") else v) for k, v in headers]
    return {**scope, "headers": trimmed}


class ListenStreams:
    """Open `subscriptions/listen` streams per API key in this process, capped at MCP_LISTEN_MAX_PER_KEY."""

    def __init__(self) -> None:
        self._open: dict[int, int] = {}

    def count(self, key_pk: int) -> int:
        return self._open.get(key_pk, 0)

    @contextlib.contextmanager
    def hold(self, key_pk: int):
        """Count one stream for the block; raises RateLimited when the key already holds the cap."""
        if self.count(key_pk) >= settings.MCP_LISTEN_MAX_PER_KEY:
            metrics.rate_limited("listen_streams")
            raise RateLimited("Too many open listen streams for this API key; close one first")
        self._open[key_pk] = self.count(key_pk) + 1
        try:
            yield
        finally:
            self._open[key_pk] -= 1
            if not self._open[key_pk]:
                del self._open[key_pk]


@dataclass
class _Session:
    key_pk: int
    in_flight: int = 0
    last_seen: float = field(default_factory=time.monotonic)


class KeySessions:
    """Stateful mode: the sessions each API key holds open in this process, followed through the SDK's answers (a
    new `Mcp-Session-Id` on a POST without one; 404 for a session it no longer has; a DELETE) and ended by the SDK's
    own idle rule (MCP_SESSION_IDLE_TIMEOUT seconds with no request in flight)."""

    def __init__(self, idle_timeout: float) -> None:
        self.idle_timeout = idle_timeout
        self._sessions: dict[str, _Session] = {}

    def count(self, key_pk: int) -> int:
        now = time.monotonic()
        for session_id, session in list(self._sessions.items()):
            if not session.in_flight and now - session.last_seen >= self.idle_timeout:
                del self._sessions[session_id]  # the SDK has closed it by now
        return sum(1 for session in self._sessions.values() if session.key_pk == key_pk)

    async def serve(self, key_pk: int, scope, handle, receive, send) -> None:
        """`handle` the request, following the session it opens, uses or ends."""
        session_id = next((v.decode() for k, v in scope["headers"] if k == _SESSION_HEADER), None)
        session = self._sessions.get(session_id) if session_id is not None else None
        status = 0

        async def watched_send(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                opened = next((v.decode() for k, v in message.get("headers", []) if k == _SESSION_HEADER), None)
                if session_id is None and opened is not None and status < 300:
                    self._sessions[opened] = _Session(key_pk)
            await send(message)

        if session is not None:
            session.in_flight += 1
        try:
            await handle(scope, receive, watched_send)
        finally:
            if session is not None:
                session.in_flight -= 1
                session.last_seen = time.monotonic()
            if session_id is not None and (status == 404 or (scope["method"] == "DELETE" and status < 300)):
                self._sessions.pop(session_id, None)


_SESSION_HEADER = MCP_SESSION_ID_HEADER.lower().encode()


@dataclass(frozen=True)
class _ModernCall:
    message: JSONRPCRequest
    route: InboundModernRoute


async def _direct_modern_call(scope, body: bytes, security: TransportSecurityMiddleware) -> _ModernCall | None:
    """The 2026-07-28 `tools/call` of a POST that the SDK's SSE mode would dispatch and answer as JSON: it passes
    the SDK's checks (same public functions: the header ladder, the `Mcp-Param-*` check against the tool's schema),
    it cannot notify (no progress token, no log level asked for), and its tool is not one that waits on an upstream
    (those take the SDK's path, where closing the stream cancels them). None for anything else, which the SDK
    answers."""
    request = Request(scope)
    if not _is_json_post(request) or check_accept_headers(request) != (True, True):
        return None
    if await security.validate_request(request, is_post=True) is not None:
        return None
    try:
        decoded = pydantic_core.from_json(body)
        message = JSONRPCRequest.model_validate(decoded)
    except (ValueError, ValidationError):
        return None
    if message.method != "tools/call" or not isinstance(message.params, dict):
        return None
    meta = message.params.get("_meta")
    if not isinstance(meta, dict) or "progressToken" in meta or LOG_LEVEL_META_KEY in meta:
        return None
    name, arguments = message.params.get("name"), message.params.get("arguments", {})
    spec = registry.get(name) if isinstance(name, str) else None
    if spec is None or spec.upstream or not isinstance(arguments, dict):
        return None
    if find_duplicated_routing_header(request.headers.items()) is not None:
        return None
    route = classify_inbound_request(decoded, headers=dict(request.headers))
    if not isinstance(route, InboundModernRoute):
        return None
    if _declares_param_headers(spec.input_schema) and validate_mcp_param_headers(
        spec.input_schema, arguments, request.headers
    ):
        return None
    return _ModernCall(message, route)


_param_headers_declared: dict[int, tuple[Any, bool]] = {}


def _declares_param_headers(schema: Any) -> bool:
    """Whether `schema` annotates any argument with `x-mcp-header` (none of ours does): without one, the SDK's
    `Mcp-Param-*` check has nothing to compare and always passes, so it is skipped (a walk of the schema per call)."""
    cached = _param_headers_declared.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _param_headers_declared[id(schema)] = (schema, bool(x_mcp_header_map(schema)))
    return cached[1]


# What a plain call's params may hold: the tool, its arguments and, on 2026-07-28, the per-request envelope.
_PLAIN_PARAMS = frozenset({"name", "arguments", "_meta"})
_ENVELOPE_META = frozenset({PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY})


def _plain_call(message: JSONRPCRequest, client_capabilities: Any, *, modern: bool) -> tuple[str, dict] | None:
    """(tool name, arguments) of a `tools/call` the SDK's request kernel would hand to our handler as it is and
    answer with nothing of its own but the result's shape; None for anything else, which the kernel answers.

    Plain: the params name one of our tools and bring an arguments object; `_meta` is absent (2025-11-25) or the
    per-request envelope alone (2026-07-28: no progress token, no log level, no trace context); no `requestState`
    or `inputResponses` (the SDK's boundary seals and checks those); the client declared no capability, so the
    default `Interaction` answers every question a tool may ask as the SDK's would (nothing to confirm or sample
    with, no progress or log to send, never cancelled); and the tool asks for no confirmation, needs no client
    capability and waits on no upstream (closing its stream cancels it on the SDK's path)."""
    params = message.params
    if not isinstance(params, dict) or not params.keys() <= _PLAIN_PARAMS:
        return None
    meta = params.get("_meta")
    if modern:
        if not isinstance(meta, dict) or not meta.keys() <= _ENVELOPE_META:
            return None
    elif "_meta" in params:
        return None
    if client_capabilities not in (None, {}):  # the envelope's raw value (2026-07-28); None: no handshake state
        return None
    name, arguments = params.get("name"), params.get("arguments", {})
    spec = registry.get(name) if isinstance(name, str) else None
    if spec is None or spec.upstream or spec.confirm or spec.client_capabilities or not isinstance(arguments, dict):
        return None
    return spec.name, arguments


def _request_meta(params: Mapping[str, Any] | None) -> RequestParamsMeta | None:
    """A request's `_meta` as the SDK's kernel lifts it for its middleware's context: None when absent or malformed."""
    if not params or "_meta" not in params:
        return None
    try:
        return RequestParams.model_validate(params, by_name=False).meta
    except ValidationError:
        return None


def _through(middleware: ServerMiddleware[Any], call_next: CallNext, ctx: ServerRequestContext[Any, Any]) -> Any:
    return middleware(ctx, call_next)


def _plain_reply(request_id: RequestId, result: dict[str, Any]) -> bytes | None:
    """The JSON-RPC reply of a plain call's `result` as the SDK's reply model writes it (the same bytes: compact,
    UTF-8, keys in order, floats in shortest form; tests/test_serving.py), in one orjson pass: the model's
    validation and serialisation of the result were a third of the event loop's work on a plain call (callgrind).
    None where orjson refuses a value (an integer past 64 bits): the model writes that reply."""
    try:
        return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})
    except orjson.JSONEncodeError:
        return None


class McpHttpApp:
    def __init__(self, info: ServerInfo | None = None) -> None:
        """`info`: the serverInfo this app's endpoints state (the site's by default)."""
        # Resource subscriptions need a session to notify: stateful mode only.
        self.server = build_server(_context_from_request, subscriptions=not settings.MCP_STATELESS_HTTP, info=info)
        common: dict[str, Any] = {
            "app": self.server,
            "security_settings": _security_settings(),
            "max_request_body_size": settings.MCP_MAX_BODY_BYTES,
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
        # its own stream and one that does not still gets a JSON body (bench/bench_serving.py: no slower).
        self.modern_manager = StreamableHTTPSessionManager(
            stateless=True, json_response=settings.MCP_MODERN_JSON_RESPONSE, **common
        )
        self.security = TransportSecurityMiddleware(self.manager.security_settings)
        # Stateless JSON-response `tools/call` skips the SDK's per-request transport, session and task group (a
        # third of the event loop's time per call, bench/bench_serving.py) for the SDK's own request kernel.
        self.direct_tools_call = self.manager.stateless and self.manager.json_response
        # Likewise a 2026-07-28 `tools/call` that cannot notify: the SDK's SSE mode would answer it as JSON anyway.
        self.direct_modern_call = True
        # Of those, a plain call (`_plain_call`) goes straight to the dispatcher and is answered with the kernel's
        # result shape (the kernel's validation, middleware and serialisation were a third of a call's CPU,
        # bench/bench_serving.py); when the request's trace records, inside the server's middleware (`_plain_traced`:
        # the SDK's MCP span first), as the kernel runs it.
        self.plain_calls = True
        # The SDK's serverInfo stamp (a copy each access, fixed at construction): taken once, only ever serialised.
        self.server_info_stamp = self.server.server_info_stamp
        self.listen_streams = ListenStreams()
        self.key_sessions = KeySessions(settings.MCP_SESSION_IDLE_TIMEOUT)
        self.lifespan_state: Any = None
        self.running = False

    @contextlib.asynccontextmanager
    async def lifespan(self):
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(self.manager.run())
            await stack.enter_async_context(self.modern_manager.run())
            # The server's lifespan state, for the calls this app answers itself (`_answer_tools_call`).
            self.lifespan_state = await stack.enter_async_context(self.server.lifespan(self.server))
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
        scope = dict(_trim_mcp_headers(scope))
        scope[SCOPE_KEY], scope[SCOPE_GROUPS] = api_key, groups
        if api_key is not None:
            # Sessions are bound to this principal by the SDK.
            token = AccessToken(token=api_key.digest, client_id=f"apikey:{api_key.pk}", scopes=list(api_key.scopes))
            scope["user"] = AuthenticatedUser(token)
            if self._session_cap_reached(scope, api_key.pk):
                metrics.rate_limited("sessions")
                too_many = RateLimited("Too many open MCP sessions for this API key; close one (DELETE) or wait")
                await self._refuse(send, too_many)
                return
        if self.direct_tools_call and len(body) <= settings.MCP_MAX_BODY_BYTES:
            message = await _direct_call_request(scope, body, self.security)
            if message is not None:
                await self._answer_tools_call(scope, message, receive, send)
                return
        if not is_modern_request(scope):
            if self.manager.stateless or api_key is None:
                await self.manager.handle_request(scope, receive, send)
            else:
                await self.key_sessions.serve(api_key.pk, scope, self.manager.handle_request, receive, send)
        elif (
            self.direct_modern_call
            and len(body) <= settings.MCP_MAX_BODY_BYTES
            and (call := await _direct_modern_call(scope, body, self.security)) is not None
        ):
            await self._answer_modern_call(scope, call, receive, send)
        elif api_key is not None and _jsonrpc_method(body) == "subscriptions/listen":
            try:
                with self.listen_streams.hold(api_key.pk):
                    await self.modern_manager.handle_request(scope, receive, send)
            except RateLimited as exc:
                await self._refuse(send, exc)
        else:
            await self.modern_manager.handle_request(scope, receive, send)

    async def _answer_tools_call(self, scope, message: JSONRPCRequest, receive, send) -> None:
        """What the SDK's stateless JSON-response transport answers to one `tools/call`, without its per-request
        machinery: the same kernel (`serve_one`: the server's middleware, parameter validation, our handler, result
        serialisation) on a born-ready connection at the header's protocol version, the same exception-to-error
        mapping, the same JSON body and headers. tests/test_serving.py compares the two answer for answer."""
        request = Request(scope, receive)
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER) or DEFAULT_NEGOTIATED_VERSION
        plain = _plain_call(message, None, modern=False) if self.plain_calls else None
        traced = plain is not None and recording()
        if plain is None or traced:  # the kernel's context and connection: for it, or for its middleware around a
            # traced plain call (built for nothing else: callgrind, 0.2 M a call)
            context = _OneCallContext(
                transport=TransportContext(kind="streamable-http", can_send_request=False),
                request_id=message.id,
                message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
                progress_token=progress_token_from_params(message.params),
            )
            connection = Connection.from_envelope(version, None, None)
        body: bytes | None = None
        try:
            if plain is not None:
                if traced:
                    result = await self._plain_traced(scope, context, connection, message, *plain)
                else:
                    result = await self._plain_result(scope, version, *plain)
                body = _plain_reply(message.id, result)
            else:
                result = await serve_one(
                    self.server, context, message.method, message.params,
                    connection=connection, lifespan_state=self.lifespan_state,
                )  # fmt: skip
            reply: JSONRPCResponse | JSONRPCError = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:  # the SDK's dispatcher answers code 0 with the message (mcp 2.3)
                logger.exception("handler for %r raised", message.method)
                error = ErrorData(code=0, message=str(exc))
            reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        if body is None:
            body = reply.model_dump_json(by_alias=True, exclude_unset=True).encode()
        response = Response(body, headers={"Content-Type": CONTENT_TYPE_JSON})
        await response(scope, receive, send)

    async def _answer_modern_call(self, scope, call: _ModernCall, receive, send) -> None:
        """What the SDK's 2026-07-28 SSE mode answers to a call that does not notify (a JSON body, its status from
        the SDK's error-code table), without its per-request task group and response stream: the same kernel
        (`serve_one`) on a connection built from the request's envelope. tests/test_modern.py compares the two
        answer for answer (status, content type, JSON value)."""
        message, route = call.message, call.route
        plain = _plain_call(message, route.client_capabilities, modern=True) if self.plain_calls else None
        traced = plain is not None and recording()
        if plain is None or traced:  # the kernel's context and connection: for it, or for its middleware
            request = Request(scope, receive)
            context = _OneCallContext(
                transport=TransportContext(kind="streamable-http", can_send_request=False, headers=request.headers),
                request_id=message.id,
                message_metadata=ServerMessageMetadata(request_context=request),
            )
            connection = Connection.from_envelope(route.protocol_version, route.client_info, route.client_capabilities)
        reply: JSONRPCResponse | JSONRPCError
        status = 200
        body: bytes | None = None
        try:
            if plain is not None:
                if traced:
                    result = await self._plain_traced(scope, context, connection, message, *plain, modern=True)
                else:
                    result = await self._plain_result(scope, route.protocol_version, *plain, modern=True)
                body = _plain_reply(message.id, result)
            else:
                result = await serve_one(
                    self.server, context, message.method, message.params,
                    connection=connection, lifespan_state=self.lifespan_state,
                )  # fmt: skip
            reply = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        except Exception as exc:
            reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=modern_error_data(exc))
            status = ERROR_CODE_HTTP_STATUS.get(reply.error.code, 200)
        # The SDK's JSON, in UTF-8 rather than \u-escaped (Japanese results are a third of the bytes).
        if body is None:
            body = reply.model_dump_json(by_alias=True, exclude_none=True).encode()
        await Response(body, status_code=status, media_type="application/json")(scope, receive, send)

    async def _plain_traced(
        self,
        scope,
        context: _OneCallContext,
        connection: Connection,
        message: JSONRPCRequest,
        name: str,
        arguments: dict,
        *,
        modern: bool = False,
    ) -> Any:
        """`_plain_result` for a request whose trace records: inside the server's middleware as the kernel runs it
        around its handler (`Server.middleware`, the SDK's OpenTelemetry span first): the SDK's own MCP span, with
        its attributes and status, without the kernel's validation and serialisation. The middleware's context is
        the one the kernel builds for the call (its session, `_meta`, request); a plain call carries no
        `requestState` and answers no `input_required`, so the request-state boundary passes it through."""
        version = connection.protocol_version

        async def handler(_ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
            return await self._plain_result(scope, version, name, arguments, modern=modern)

        meta = _request_meta(message.params)
        ctx: ServerRequestContext[Any, Any] = ServerRequestContext(
            session=ServerSession(context, connection, request_meta=meta),
            lifespan_context=self.lifespan_state,
            protocol_version=version,
            method=message.method,
            params=message.params,
            request_id=message.id,
            meta=meta,
            request=context.message_metadata.request_context,
        )
        call: CallNext = handler
        for middleware in reversed(self.server.middleware):
            call = functools.partial(_through, middleware, call)
        return await call(ctx)

    async def _plain_result(
        self, scope, version: str, name: str, arguments: dict, *, modern: bool = False
    ) -> dict[str, Any]:
        """The result the SDK's kernel gives a plain call (`_plain_call`) at `version`: our handler's answer
        (server.tool_call_result, as `on_call_tool` gives it) in the shape the kernel's serialisation writes, with
        2026-07-28's `resultType` and `serverInfo` stamp. Raises as the handler does (MCPError)."""
        call_ctx = dispatch.call_context(transport="http", api_key=scope.get(SCOPE_KEY), protocol=version)
        call = dispatch.acall_tool(call_ctx, name, arguments, scope.get(SCOPE_GROUPS))
        result = await tool_call_result(call, registry.get(name), result_type="complete" if modern else None)
        if isinstance(result, CallToolResult):  # content blocks: the SDK's own serialisation
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            result = serialize_server_result("tools/call", version, dumped)
        elif not isinstance(result, dict):  # a question: only the SDK's boundary may seal its state
            raise RuntimeError("A plain tools/call answered input_required")
        if modern:  # the SDK's stamp: on a `_meta` that has none (an explicit null counts as none)
            meta = result.get("_meta")
            if meta is None or (isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None):
                result["_meta"] = {**(meta or {}), SERVER_INFO_META_KEY: self.server_info_stamp}
        return result

    async def _count_request(self, body: bytes, send, api_key) -> bool:
        """Count this request against the key's rate, so `initialize`, pings, notifications and stream GETs are
        bounded like tool calls (an uncounted `initialize` let one key open thousands of sessions). tools/call and
        tools/list are counted by the dispatcher, which also audits them. False when the request was refused."""
        if _jsonrpc_method(body) in DISPATCH_COUNTED:
            return True
        try:
            await dispatch.in_worker_thread(enforce_api_key_rate)(api_key)
        except RateLimited as exc:
            metrics.rate_limited("api_key")
            retry_after = await dispatch.in_worker_thread(api_key_retry_after)(api_key)
            await self._refuse(send, exc, [(b"retry-after", str(retry_after).encode())] if retry_after else [])
            return False
        return True

    def _session_cap_reached(self, scope, key_pk: int) -> bool:
        """True when this request would open a stateful session and its key already holds
        MCP_MAX_SESSIONS_PER_KEY of them (the SDK's own cap is global, so one key could take every slot)."""
        if self.manager.stateless or scope["method"] != "POST" or is_modern_request(scope):
            return False
        if any(name == _SESSION_HEADER for name, _ in scope["headers"]):
            return False
        return self.key_sessions.count(key_pk) >= settings.MCP_MAX_SESSIONS_PER_KEY

    @staticmethod
    async def _refuse(send, error: ApplicationError, extra: list[tuple[bytes, bytes]] | None = None) -> None:
        extra = list(extra or [])
        if isinstance(error, Unauthorized) and not any(name == b"www-authenticate" for name, _ in extra):
            extra.append((b"www-authenticate", b'Bearer realm="mcpsite"'))
        body = {"jsonrpc": "2.0", "id": None, "error": as_jsonrpc(error)}
        await _send_json(send, http_status(error), body, extra)
