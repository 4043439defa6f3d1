"""Rate limits, counted by django-ratelimit in the shared cache (database cache or Redis)."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import caches
from django_ratelimit.core import ALL, _get_window, _make_cache_key, _split_rate, get_usage

from .errors import RateLimited

API_KEY_GROUP = "mcp.apikey"


def usage(*, group: str, key: str, rate: str, increment: bool = False) -> dict | None:
    """django-ratelimit's count for `key` in `group` at `rate` (`count`, `limit`, `should_limit`, `time_left`),
    counting one hit first when `increment`.

    Counting increments first: get_usage adds the window's counter (a read that finds it there, on every hit
    but the window's first) and only then increments it. The window's first hit finds no counter to increment
    and goes through get_usage, which adds it, as exact as before.
    """
    if increment and getattr(settings, "RATELIMIT_ENABLE", True):
        limit, period = _split_rate(rate)
        window = _get_window(key, period)
        try:
            count = caches[settings.RATELIMIT_USE_CACHE].incr(_make_cache_key(group, window, rate, key, ALL))
        except ValueError:  # no counter yet in this window
            pass
        else:
            if count is not None:  # a Redis client answers None for an unknown key
                return {
                    "count": count,
                    "limit": limit,
                    "should_limit": count > limit,
                    "time_left": window - int(time.time()),
                }
    return get_usage(None, group=group, key=lambda _group, _request: key, rate=rate, increment=increment)


def over_limit(*, group: str, key: str, rate: str) -> bool:
    """Count one hit for `key` in `group`; True when the rate is exceeded."""
    counted = usage(group=group, key=key, rate=rate, increment=True)
    return bool(counted and counted["should_limit"])


def give_back(*, group: str, key: str, rate: str) -> None:
    """Uncount one hit that over_limit counted (an attempt that turned out not to be one to limit, such as the right
    password). Atomic like the count (the cache's decr); nothing when the window has ended meanwhile."""
    _limit, period = _split_rate(rate)
    # django-ratelimit has no public decrement; this is the key get_usage counted under (method=ALL).
    cache_key = _make_cache_key(group, _get_window(key, period), rate, key, ALL)
    try:
        caches[settings.RATELIMIT_USE_CACHE].decr(cache_key)
    except ValueError:  # the window's counter expired
        pass


def _api_key_rate(api_key) -> dict:
    return {"group": API_KEY_GROUP, "key": str(api_key.pk), "rate": api_key.rate or settings.MCP_DEFAULT_RATE}


def enforce_api_key_rate(api_key) -> None:
    """One request by this key; RateLimited (429) past the key's rate (default 100/min)."""
    if api_key is None:  # stdio and other trusted local callers
        return
    if over_limit(**_api_key_rate(api_key)):
        raise RateLimited()


def api_key_retry_after(api_key) -> int | None:
    """Whole seconds until the key's window ends when the key is over its rate (the `Retry-After` of the 429 it
    got); None when it is not, so a 429 from another limit is not given the key's window."""
    counted = usage(**_api_key_rate(api_key))
    return max(1, counted["time_left"]) if counted and counted["should_limit"] else None
