"""An ASGI guard in front of every HTTP request: body size, slow bodies, and the API key before the body.

Django's ASGI handler reads a whole request body (into a temporary file past 2.5 MB) before any view runs, so
limits enforced in a view come too late: without a key, `/rpc` accepted a 1 GiB `Content-Length` and buffered
300 MB before answering 401, and bodies trickled a byte at a time were never timed out. Here, before Django or
the MCP SDK sees the request:

- a declared `Content-Length` over the limit is refused at once (413), and so is a streamed body that passes it;
- the body must arrive within `HTTP_BODY_TIMEOUT_S` seconds (408);
- the seed tool endpoints (`/rpc`, `/mcp/tools/*`, `/mcp/<group>/tools/*`) check the `Authorization` header's
  API key before reading a byte (401), and hand the key on in the scope so the view does not look it up again;
- MCP responses get `X-Content-Type-Options: nosniff` and `X-Frame-Options: DENY` (Django adds them to its own);
- the `Host` header must name one of ALLOWED_HOSTS by Django's own rules, on every path and on WebSockets (400):
  the MCP SDK's DNS-rebinding check matched `127.0.0.1:*` as a prefix, so `Host: 127.0.0.1:1@evil.com` reached
  `/mcp` and was echoed into `WWW-Authenticate`.

Refusals keep each endpoint's error shape: a JSON-RPC error object on `/rpc` and `/mcp`, `{"error": {…}}` on
the REST endpoints.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from .core.errors import ApplicationError, InvalidRequest, PayloadTooLarge, RequestTimeout
from .core.jsonutil import dumps
from .mcp.auth import SCOPE_AUTHENTICATED_KEY, api_key_from_scope
from .mcp.http import mcp_groups_for_path
from .mcp.wire import as_jsonrpc, http_status, rest_status

RPC, REST, MCP, OTHER = "rpc", "rest", "mcp", "other"
_REST_PATH = re.compile(r"^/mcp(?:/[^/]+)?/tools/[^/]+/?$")
SECURITY_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY")]


class _Refused(Exception):
    def __init__(self, error: ApplicationError):
        self.error = error


def endpoint_kind(path: str) -> str:
    if path.rstrip("/") == "/rpc":
        return RPC
    if _REST_PATH.match(path):
        return REST
    if mcp_groups_for_path(path) is not False:
        return MCP
    return OTHER


class RequestGuard:
    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket" and not host_allowed(scope):
            await receive()  # websocket.connect; closing before accepting answers the handshake with 403
            await send({"type": "websocket.close", "code": 4400})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        kind = endpoint_kind(scope["path"])
        limit = settings.HTTP_MAX_BODY_BYTES if kind == OTHER else settings.MCP_MAX_BODY_BYTES
        try:
            if not host_allowed(scope):
                raise _Refused(InvalidRequest(data="Invalid Host header"))
            _check_declared_length(scope, limit)
            if kind in (RPC, REST):
                scope = {**scope, SCOPE_AUTHENTICATED_KEY: await api_key_from_scope(scope)}
            body = await _read_body(receive, limit)
        except _Refused as refused:
            await _refuse(send, kind, refused.error)
            return
        except ApplicationError as error:  # Unauthorized from the key check
            await _refuse(send, kind, error)
            return
        if body is None:  # the client went away
            return
        if kind == MCP:
            send = _with_headers(send, SECURITY_HEADERS)
        await self.app(scope, _replay(body, receive), send)


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


def _replay(body: bytes, receive):
    """The body as one message, then the real channel (so streams still see the client disconnect)."""
    sent = False

    async def replayed():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _with_headers(send, extra: list[tuple[bytes, bytes]]):
    async def sending(message):
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _value in message.get("headers", [])}
            added = [(name, value) for name, value in extra if name not in present]
            message = {**message, "headers": [*message.get("headers", []), *added]}
        await send(message)

    return sending


async def _refuse(send, kind: str, error: ApplicationError) -> None:
    body: dict[str, Any]
    if kind == REST:
        status, body = rest_status(error), {"error": as_jsonrpc(error)}
    else:  # /rpc and /mcp answer JSON-RPC; other pages get the same object, which a person can read too
        status, body = http_status(error), {"jsonrpc": "2.0", "id": None, "error": as_jsonrpc(error)}
    payload = dumps(body).encode()
    headers = [
        (b"content-type", b"application/json; charset=utf-8"),
        (b"content-length", str(len(payload)).encode()),
        # The rest of an unread body would be taken for the next request on this connection.
        (b"connection", b"close"),
        *SECURITY_HEADERS,
    ]
    if http_status(error) == 401:
        headers.append((b"www-authenticate", b'Bearer realm="mcpsite"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
