"""The sealed `requestState` of multi round-trip calls (MCP 2026-07-28): keys, lifetime, and whose it is.

A call that needs the user's answer (a confirmation, calls.RoundTripInteraction) answers `input_required` with a
`requestState` the client must bring back with the answer. The client holds it, so it is treated as hostile: the
SDK's `RequestStateBoundary` (server middleware) encrypts and authenticates it (AES-256-GCM) and binds it to the
method, the tool, a digest of the exact arguments, this server (audience), the caller and an expiry; a state that
fails any of these is refused with -32602 "Invalid or expired requestState" before our handler runs (and is
counted against the key's rate and audited: `CheckedRequestStates`).

Keys come from the site's secret, so every process and host of one site reads the states of the others, and a
rotation of `SECRET_KEY` (the old one moved to `SECRET_KEY_FALLBACKS`) keeps states minted under the old key
valid: the newest key seals, every key unseals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.utils.crypto import salted_hmac
from mcp.server.request_state import (
    RequestStateBoundary,
    RequestStateSecurity,
)
from mcp.shared.exceptions import MCPError

from .registry import CallContext

# Separates this use of the site's secret from every other (sessions, signing, password resets).
KEY_SALT = "mcpsite.mcp.requeststate"


def request_state_keys(salt: str = KEY_SALT) -> list[bytes]:
    """One 32-byte key per site secret, newest first (`SECRET_KEY`, then `SECRET_KEY_FALLBACKS`)."""
    keys: list[bytes] = []
    for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]:
        key = salted_hmac(salt, b"", secret=secret, algorithm="sha256").digest()
        if key not in keys:  # a fallback equal to the key itself (mid-rotation) is one ring key
            keys.append(key)
    return keys


def principal_of(ctx: CallContext) -> str | None:
    """Whose a state is: the API key (or OAuth user and client: what binds a stateful session too), else the
    trusted local user (stdio --user); None only for an anonymous caller (MCP_REQUIRE_API_KEY off)."""
    if ctx.api_key is not None:
        return f"credential:{ctx.api_key.digest}"
    if ctx.owner is not None:
        return f"user:{ctx.owner.pk}"
    return None


class CheckedRequestStates:
    """Server middleware: the SDK's `RequestStateBoundary`, plus `on_refused(sdk_ctx)` awaited when it refuses a
    request's state (the request never reaches the handler, which would have counted and audited it)."""

    def __init__(self, principal: Callable[[Any], str | None], on_refused: Callable[[Any], Awaitable[None]]) -> None:
        security = RequestStateSecurity(
            keys=request_state_keys(),
            ttl=settings.MCP_REQUEST_STATE_TTL,
            bind_principal=principal,
            audience=settings.MCP_SERVER_NAME,
        )
        self.boundary = RequestStateBoundary(security, default_audience=settings.MCP_SERVER_NAME)
        self.on_refused = on_refused

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        reached: list[bool] = []

        async def passed(checked_ctx: Any) -> Any:
            reached.append(True)
            return await call_next(checked_ctx)

        try:
            return await self.boundary(ctx, passed)
        except MCPError:
            if not reached:  # refused by the boundary itself, not by what ran after it
                await self.on_refused(ctx)
            raise
