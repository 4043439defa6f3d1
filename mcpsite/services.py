"""Platform writes: API keys."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from .core.scopes import tool_groups
from .models import ApiKey, ToolCall

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class ScopeError(ValueError):
    pass


def scopes_parse(*, text: str) -> list[str]:
    """`cinema,ledger` or `all` -> a validated list of tool groups."""
    groups = tool_groups()
    if text.strip() in {"all", "*"}:
        return list(groups)
    scopes = [s.strip() for s in text.split(",") if s.strip()]
    unknown = sorted(set(scopes) - set(groups))
    if unknown:
        raise ScopeError(f"Unknown scope(s): {', '.join(unknown)}. Choose from: {', '.join(groups)}")
    if not scopes:
        raise ScopeError("At least one scope is required")
    return scopes


def api_key_create(*, name: str, owner: User | None, scopes: list[str], rate: str | None = None) -> tuple[ApiKey, str]:
    """Create a key; returns the record and the raw key, which is shown once and never stored."""
    api_key = ApiKey(name=name, owner=owner, scopes=list(scopes), rate=rate or settings.MCP_DEFAULT_RATE)
    raw_key = api_key.set_new_key()
    with transaction.atomic():
        api_key.full_clean(exclude=["digest"])
        api_key.save()
    return api_key, raw_key


# How long a new key waits, sealed, for its one showing (the redirect after the admin's POST).
NEW_KEY_HOLD_SECONDS = 300


def _new_key_pad(token: str, length: int) -> bytes:
    return hashlib.shake_256(f"mcpsite.new-key:{token}".encode()).digest(length)


def _new_key_slot(token: str, user_pk: int) -> str:
    return "mcpsite:new-key:" + hashlib.sha256(f"{user_pk}:{token}".encode()).hexdigest()


def api_key_hold_for_showing(*, raw_key: str, user_pk: int) -> str:
    """Keep a new key for one showing to the staff member who made it; returns the token the showing needs.

    The shared cache (every process sees it) holds the key sealed with a one-time pad derived from the token, which
    only the redirect's URL carries: neither the cache nor a cookie or the session ever holds the key in clear."""
    token = secrets.token_urlsafe(32)
    data = raw_key.encode()
    sealed = bytes(a ^ b for a, b in zip(data, _new_key_pad(token, len(data)), strict=True))
    cache.set(_new_key_slot(token, user_pk), sealed, NEW_KEY_HOLD_SECONDS)
    return token


def api_key_take_held(*, token: str, user_pk: int) -> str | None:
    """The key held by `api_key_hold_for_showing` for this token and user, once; None ever after (or if unknown)."""
    slot = _new_key_slot(token, user_pk)
    sealed = cache.get(slot)
    # Only the request whose delete removed the entry shows it: two requests at once cannot both get the key.
    if not isinstance(sealed, bytes) or not cache.delete(slot):
        return None
    return bytes(a ^ b for a, b in zip(sealed, _new_key_pad(token, len(sealed)), strict=True)).decode()


def tool_calls_prune(*, older_than_days: int) -> int:
    """Delete audit records older than the given number of days; returns how many were deleted."""
    if older_than_days < 1:
        raise ValueError("older_than_days must be at least 1")
    cutoff = timezone.now() - timedelta(days=older_than_days)
    deleted, _ = ToolCall.objects.filter(created_at__lt=cutoff).delete()
    return deleted
