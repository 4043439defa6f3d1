"""CORS: the ingress's stage that lets a web page on an allowed origin call the doors a browser client uses.

The doors: the MCP endpoints (`/mcp`, `/mcp/<group>`), the seed endpoints (`/rpc`, the REST tool endpoints) and the
OAuth endpoints a browser client calls itself (the discovery documents, registration, token, revocation). The
origins: CORS_ALLOWED_ORIGINS (exact `scheme://host[:port]` origins; none by default, so no page elsewhere can read
an answer). mcpsite.guard runs this stage before anything else:

- a preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) at a door is answered here, before the
  credential is looked at (a browser never sends one with it): 204 with the allowed methods and the requested
  headers for an allowed origin, 403 for any other;
- every other answer at a door, a refusal included (a 401's `WWW-Authenticate` is what starts a browser's OAuth),
  carries `Access-Control-Allow-Origin` for an allowed origin and exposes the headers a client reads.

Credentials are bearer tokens in `Authorization`, never cookies, so `Access-Control-Allow-Credentials` is not sent.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.urls import Resolver404, resolve

Headers = list[tuple[bytes, bytes]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

# The response headers an MCP or OAuth client reads (Content-Type is readable anyway).
EXPOSED = b"Mcp-Session-Id, WWW-Authenticate, Retry-After, MCP-Protocol-Version, Idempotent-Replayed"
METHODS = b"GET, POST, DELETE, OPTIONS"
# Seconds a browser may reuse a preflight's answer (Chromium caps it at 7200).
MAX_AGE = b"600"
# The OAuth endpoints a browser client calls (django-oauth-toolkit's namespace, mcpsite_oauth/urls.py); the sign-in
# and consent pages are navigations, not calls.
OAUTH_URL_NAMES = frozenset(
    {
        "oauth-server-metadata",
        "oauth-resource-metadata",
        "oauth-resource-metadata-mcp",
        "token",
        "revoke-token",
        "dcr-register",
        "dcr-register-management",
    }
)
ORIGIN_FORM = re.compile(r"^https?://[^/?#@\s]+$")
_TOKEN = re.compile(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def origin_valid(origin: str) -> bool:
    """An entry of CORS_ALLOWED_ORIGINS: `http(s)://host[:port]`, nothing after it (as browsers send `Origin`)."""
    return bool(ORIGIN_FORM.match(origin))


def stage(scope, send: Send, mcp_door: bool) -> tuple[Send, bool]:
    """(`send` adding the CORS headers a request at a browser door gets, whether the request is a preflight the
    ingress answers with `answer_preflight`). `mcp_door`: the path is an MCP or seed endpoint."""
    if not settings.CORS_ALLOWED_ORIGINS:
        return send, False
    headers = dict(scope.get("headers") or [])
    origin = headers.get(b"origin")
    if origin is None or not (mcp_door or _oauth_door(scope["path"])):
        return send, False
    preflight = scope["method"] == "OPTIONS" and b"access-control-request-method" in headers
    return _sending(send, _headers(origin)), preflight


async def answer_preflight(scope, send: Send) -> None:
    """The answer to a preflight at a door (`send` from `stage` adds the origin's headers when it is allowed)."""
    headers = dict(scope.get("headers") or [])
    if not allowed(headers[b"origin"]):
        await _send_empty(send, 403, [])
        return
    requested = [name.strip() for name in headers.get(b"access-control-request-headers", b"").split(b",")]
    answer = [(b"access-control-allow-methods", METHODS), (b"access-control-max-age", MAX_AGE)]
    if names := [name for name in requested if _TOKEN.match(name)]:
        # The origin is trusted by the site's configuration; the credential, not the header list, guards each door.
        answer.append((b"access-control-allow-headers", b", ".join(names)))
    await _send_empty(send, 204, answer)


def allowed(origin: bytes) -> bool:
    return origin.decode("latin-1").lower() in settings.CORS_ALLOWED_ORIGINS


def _headers(origin: bytes) -> Headers:
    if not allowed(origin):
        return []
    return [(b"access-control-allow-origin", origin), (b"access-control-expose-headers", EXPOSED)]


def _oauth_door(path: str) -> bool:
    try:
        match = resolve(path)
    except Resolver404:
        return False
    return match.namespace == "oauth2_provider" and match.url_name in OAUTH_URL_NAMES


def _sending(send: Send, cors: Headers) -> Send:
    """`send` with `cors` and `Vary: Origin` (the answer differs by origin, for caches) on the response's start.
    `cors` replaces a view's own (django-oauth-toolkit's discovery documents say `*`): a second
    `Access-Control-Allow-Origin` would make the browser refuse the answer."""
    replaced = {b"vary", *(name for name, _value in cors)}

    async def sending(message):
        if message["type"] == "http.response.start":
            given = message.get("headers", [])
            headers = [(name, value) for name, value in given if name.lower() not in replaced]
            vary = [value for name, value in given if name.lower() == b"vary"]
            headers += [(b"vary", b", ".join([*vary, b"Origin"])), *cors]
            message = {**message, "headers": headers}
        await send(message)

    return sending


async def _send_empty(send: Send, status: int, headers: Headers) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0"), *headers]})
    await send({"type": "http.response.body", "body": b""})
