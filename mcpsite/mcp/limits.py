"""Rate limits, counted by django-ratelimit in the shared cache (database cache or Redis)."""

from __future__ import annotations

from django.conf import settings
from django_ratelimit.core import get_usage

from .errors import RateLimited


def over_limit(*, group: str, key: str, rate: str, increment: bool = True) -> bool:
    """Count one hit (when `increment`) for `key` in `group`; True when the rate is exceeded."""
    usage = get_usage(None, group=group, key=lambda _group, _request: key, rate=rate, increment=increment)
    return bool(usage and usage["should_limit"])


def enforce_api_key_rate(api_key) -> None:
    """One request by this key; RateLimited (429) past the key's rate (default 100/min)."""
    if api_key is None:  # stdio and other trusted local callers
        return
    if over_limit(group="mcp.apikey", key=str(api_key.pk), rate=api_key.rate or settings.MCP_DEFAULT_RATE):
        raise RateLimited()
