"""Platform writes: API keys."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
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


def tool_calls_prune(*, older_than_days: int) -> int:
    """Delete audit records older than the given number of days; returns how many were deleted."""
    if older_than_days < 1:
        raise ValueError("older_than_days must be at least 1")
    cutoff = timezone.now() - timedelta(days=older_than_days)
    deleted, _ = ToolCall.objects.filter(created_at__lt=cutoff).delete()
    return deleted
