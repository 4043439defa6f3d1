"""The ingress: what every HTTP request and WebSocket handshake passes once, before any route.

- CORS (mcpsite/cors.py): a browser's preflight at an MCP, seed or OAuth door is answered before the credential is
  looked at, and every answer there carries the headers an allowed origin's page needs (CORS_ALLOWED_ORIGINS);
- the `Host` (or trusted `X-Forwarded-Host`) names one of ALLOWED_HOSTS by Django's own rules (400; a WebSocket's
  handshake is refused);
- on the MCP doors (`/mcp`, `/mcp/<group>`, `/rpc`, the REST tool endpoints, every WebSocket) the credential
  becomes a principal (an API key, or an OAuth grant) before a byte of the body is read: 401 without a good one,
  403 for an OAuth token at `/mcp/<group>` without that group's scope, 503 when the database cannot say; the
  principal travels in the ASGI scope (`SCOPE_PRINCIPAL`) and nothing downstream authenticates again;
- the body is read here, within its endpoint's limit (a declared `Content-Length` over it is refused at once, 413)
  and within HTTP_BODY_TIMEOUT_S (408), and parsed once on the MCP doors; downstream reads the replayed body and
  finds its JSON (or the ParseError) in the scope (`jsonrpc.SCOPE_JSON`);
- accounting: an MCP or REST request counts once against its key's rate (429 with `Retry-After`): a REST request
  here, an MCP request where its transport first acts on it (`dispatch.Admission`, in the scope; a plain tools/call
  in its own worker thread), and here after the answer if no route did; `/rpc` and the WebSocket count each
  JSON-RPC message as they read it (`dispatch.account`, the same stage);
- caps: a seed request holds one of its key's MCP_KEY_CONCURRENCY slots while it runs (the MCP transport takes its
  slot around the tool's worker thread; caps.py).

Refusals keep each endpoint's error shape (refusals.py): a JSON-RPC error object on `/rpc` and `/mcp`,
`{"error": {…}}` on the REST endpoints, a 401 with the seed's JSON-RPC body on a refused WebSocket handshake.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from . import cors
from .core.errors import ApplicationError, InvalidRequest, PayloadTooLarge, RequestTimeout
from .mcp import caps, dispatch, jsonrpc, registry
from .mcp.auth import SCOPE_PRINCIPAL, api_key_from_scope, bearer_challenge, endpoint_scope_denied
from .mcp.http import SCOPE_GROUPS, mcp_groups_for_path, replay
from .mcp.outages import unavailable
from .mcp.refusals import Shape, refusal, send_refusal

RPC, REST, MCP, OTHER = "rpc", "rest", "mcp", "other"
_REST_PATH = re.compile(r"^/mcp(?:/(?P<group>[^/]+))?/tools/[^/]+/?$")
SECURITY_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY")]


class _Refused(Exception):
    def __init__(self, error: ApplicationError):
        self.error = error


def endpoint(path: str) -> tuple[str, list[str] | None]:
    """(kind, groups) of a path: groups None for every group, a one-group list for a group's endpoint."""
    if path.rstrip("/") == "/rpc":
        return RPC, None
    if rest := _REST_PATH.match(path):
        group = rest.group("group")
        return REST, [group] if group is not None else None
    groups = mcp_groups_for_path(path)
    if groups is not False:
        return MCP, groups
    return OTHER, None


def limit_for(kind: str, groups: list[str] | None) -> int:
    """The largest body an endpoint accepts: the largest request of the tools it serves on the MCP doors
    (registry.max_request_bytes), HTTP_MAX_BODY_BYTES on every other page."""
    return settings.HTTP_MAX_BODY_BYTES if kind == OTHER else registry.max_request_bytes(groups)


class RequestGuard:
    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _http(self, scope, receive, send) -> None:
        kind, groups = endpoint(scope["path"])
        send, preflight = cors.stage(scope, send, mcp_door=kind != OTHER)
        limit = limit_for(kind, groups)
        principal, body, message = None, b"", None
        read: bytes | None
        try:
            if not host_allowed(scope):
                raise _Refused(InvalidRequest(data="Invalid Host header"))
            if preflight:  # before the credential: a browser sends none with a preflight
                await cors.answer_preflight(scope, send)
                return
            _check_declared_length(scope, limit)
            if kind != OTHER:
                principal = await _principal(scope, groups if kind == MCP else None)
            read = await _read_body(receive, limit)
            if read is None:  # the client went away
                return
            body = read
            if kind != OTHER and body:
                message = jsonrpc.parse_kept(body)
                scope = {**scope, jsonrpc.SCOPE_JSON: message}
            admission = await _admission(kind, groups, principal, message)
        except (_Refused, dispatch.NotAdmitted, ApplicationError) as exc:
            error = exc if isinstance(exc, ApplicationError) else exc.error
            await _refuse(scope, send, error, kind, groups, message, body_read=body != b"")
            return
        scope = {**scope, SCOPE_PRINCIPAL: principal, SCOPE_GROUPS: groups, dispatch.SCOPE_ADMISSION: admission}
        receive = replay(body, receive)
        if kind == MCP:
            try:
                await self.app(scope, receive, _with_headers(send, SECURITY_HEADERS))
            except dispatch.NotAdmitted as refused:  # the transport took the count before it answered anything
                await _refuse(scope, send, refused.error, kind, groups, message, body_read=True)
            finally:
                if admission is not None:  # whatever the route did, the request is counted
                    with contextlib.suppress(dispatch.NotAdmitted):
                        await admission.atake()
        elif kind in (RPC, REST):
            async with caps.key_slot(principal):
                await self.app(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _websocket(self, scope, receive, send) -> None:
        """A handshake is refused before it is accepted: a foreign Host (403), a missing or bad credential (401 with
        the seed's JSON-RPC body, where the server can send one), an unknown group (403, by the router)."""
        if not host_allowed(scope):
            await receive()  # websocket.connect; closing before accepting answers the handshake with 403
            await send({"type": "websocket.close", "code": 4400})
            return
        try:
            principal = await _principal(scope, None)
        except ApplicationError as error:
            await _deny_websocket(scope, receive, send, error)
            return
        await self.app({**scope, SCOPE_PRINCIPAL: principal}, receive, send)


_CHALLENGED = frozenset({"UNAUTHORIZED", "SCOPE_DENIED"})


async def _admission(kind: str, groups: list[str] | None, principal, message: Any) -> dispatch.Admission | None:
    """The accounting stage of a credited MCP or REST request. A REST request is counted here; an MCP request's
    count travels in the scope, taken by the transport before it does anything for the request (a plain
    tools/call: in the call's own worker thread). On MCP, the door's scope check of the tool it calls (an OAuth
    client is challenged for the scope it lacks), after the count."""
    if kind not in (MCP, REST) or principal is None:
        return None
    ctx = dispatch.call_context(transport="http" if kind == MCP else "rest", api_key=principal)
    admission = dispatch.Admission(ctx, _called_tool(message, kind))
    if kind == REST:
        await _available(admission.atake())
        return None
    await _available(dispatch.aauthorize_at_door(admission, groups))
    return admission


async def _refuse(
    scope, send, error: ApplicationError, kind: str, groups: list[str] | None, message: Any, *, body_read: bool
) -> None:
    """`error` in the endpoint's shape, with the bearer challenge where MCP's auth asks for one."""
    challenged = kind == MCP and error.kind.name in _CHALLENGED
    challenge = bearer_challenge(scope, error, groups) if challenged else None
    shape: Shape = "rest" if kind == REST else "jsonrpc"
    request_id = jsonrpc.request_id(message) if kind in (MCP, RPC) else None
    # The rest of an unread body would be taken for the next request on this connection.
    close = [] if body_read else [(b"connection", b"close")]
    await send_refusal(
        send, error, shape, request_id=request_id, challenge=challenge, extra=[*close, *SECURITY_HEADERS]
    )


async def _principal(scope, groups: list[str] | None):
    """The request's principal; Unauthorized, ScopeDenied (an OAuth token at a group's endpoint without its scope)
    or ServiceUnavailable."""
    principal = await _available(api_key_from_scope(scope))
    if denied := endpoint_scope_denied(principal, groups):
        raise denied
    return principal


async def _available(awaitable):
    """`awaitable`'s result; a dependency that does not answer (the database, Redis) refuses the request with 503."""
    try:
        return await awaitable
    except ApplicationError:
        raise
    except Exception as exc:
        if (refusal := unavailable(exc)) is not None:
            raise refusal from None
        raise


async def _deny_websocket(scope, receive, send, error: ApplicationError) -> None:
    await receive()  # websocket.connect
    if "websocket.http.response" not in (scope.get("extensions") or {}):
        await send({"type": "websocket.close", "code": 4401})
        return
    status, headers, payload = refusal(error, "jsonrpc")
    await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": payload})


def _called_tool(message: Any, kind: str) -> Any:
    """The tool a request calls, for the audit of a refused call: `tools/call`'s name on MCP, the REST call's."""
    if kind == REST:
        return message.get("name") if isinstance(message, dict) else None
    return jsonrpc.called_tool(message)


def host_allowed(scope) -> bool:
    """The request's host (`Host`, or `X-Forwarded-Host` when USE_X_FORWARDED_HOST) by HttpRequest.get_host's
    rules: one of ALLOWED_HOSTS (with DEBUG and none set, the local names Django allows). No header: True, as
    Django then uses the server's own name."""
    headers = dict(scope.get("headers") or [])
    raw = (settings.USE_X_FORWARDED_HOST and headers.get(b"x-forwarded-host")) or headers.get(b"host")
    if raw is None:
        return True
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    domain, _port = split_domain_port(raw.decode("latin-1"))
    return bool(domain) and validate_host(domain, allowed)


def _check_declared_length(scope, limit: int) -> None:
    for name, value in scope.get("headers") or []:
        if name == b"content-length" and (not value.isdigit() or int(value) > limit):
            raise _Refused(PayloadTooLarge(data=f"The body may be at most {limit} bytes"))


async def _read_body(receive, limit: int) -> bytes | None:
    """The whole body, or None when the client disconnected; _Refused past `limit` bytes or the deadline."""
    chunks, size = [], 0
    try:
        async with asyncio.timeout(settings.HTTP_BODY_TIMEOUT_S):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise _Refused(PayloadTooLarge(data=f"The body may be at most {limit} bytes"))
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
    except TimeoutError:
        raise _Refused(
            RequestTimeout(data=f"The body must arrive within {settings.HTTP_BODY_TIMEOUT_S:g} seconds")
        ) from None


def _with_headers(send, extra: list[tuple[bytes, bytes]]):
    async def sending(message):
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _value in message.get("headers", [])}
            added = [(name, value) for name, value in extra if name not in present]
            message = {**message, "headers": [*message.get("headers", []), *added]}
        await send(message)

    return sending
