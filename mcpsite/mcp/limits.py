"""Rate limits, counted by django-ratelimit in the shared cache (database cache or Redis)."""

from __future__ import annotations

from django.conf import settings
from django_ratelimit.core import get_usage

from .errors import RateLimited

API_KEY_GROUP = "mcp.apikey"


def _usage(*, group: str, key: str, rate: str, increment: bool) -> dict | None:
    return get_usage(None, group=group, key=lambda _group, _request: key, rate=rate, increment=increment)


def over_limit(*, group: str, key: str, rate: str, increment: bool = True) -> bool:
    """Count one hit (when `increment`) for `key` in `group`; True when the rate is exceeded."""
    usage = _usage(group=group, key=key, rate=rate, increment=increment)
    return bool(usage and usage["should_limit"])


def _api_key_rate(api_key) -> dict:
    return {"group": API_KEY_GROUP, "key": str(api_key.pk), "rate": api_key.rate or settings.MCP_DEFAULT_RATE}


def enforce_api_key_rate(api_key) -> None:
    """One request by this key; RateLimited (429) past the key's rate (default 100/min)."""
    if api_key is None:  # stdio and other trusted local callers
        return
    if over_limit(**_api_key_rate(api_key)):
        raise RateLimited()


def api_key_retry_after(api_key) -> int:
    """Whole seconds until the key's current window ends: the `Retry-After` of an HTTP 429."""
    usage = _usage(**_api_key_rate(api_key), increment=False)
    return max(1, usage["time_left"]) if usage else 1
