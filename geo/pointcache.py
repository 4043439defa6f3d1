"""The cache of resolved integer points, so repeated points skip GaluchatAPI.

Keyed by granularity, mapset, unit and the integer point. It uses the `geo` cache alias when the
settings declare one (e.g. Redis, or a LocMemCache sized for it); otherwise a process-local
LocMemCache. It never falls back to the `default` alias: that is a DatabaseCache with the default
MAX_ENTRIES of 300, and 10,000 points would make it cull the rate-limit counters stored beside them.
"""

from __future__ import annotations

import threading
from decimal import Decimal

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.cache.backends.locmem import LocMemCache

from .merge import Resolved

ALIAS = "geo"
LOCAL_MAX_ENTRIES = 200_000
BATCH = 500  # keys per get_many/set_many (bounded IN lists on database caches)

_local: LocMemCache | None = None
_local_lock = threading.Lock()


def point_cache() -> BaseCache:
    global _local
    if ALIAS in settings.CACHES:
        return caches[ALIAS]
    with _local_lock:
        if _local is None:
            _local = LocMemCache("geo-points", {"OPTIONS": {"MAX_ENTRIES": LOCAL_MAX_ENTRIES, "CULL_FREQUENCY": 10}})
        return _local


def cache_key(granularity: str, mapset: str, unit: Decimal, point: tuple[int, int]) -> str:
    return f"geo:pt:{granularity}:{mapset}:{unit.normalize():f}:{point[0]}:{point[1]}"


def get_many(keys: list[str]) -> dict[str, Resolved]:
    cache = point_cache()
    found: dict[str, Resolved] = {}
    for start in range(0, len(keys), BATCH):
        for key, value in cache.get_many(keys[start : start + BATCH]).items():
            if isinstance(value, tuple | list) and len(value) == 2:
                found[key] = (value[0], value[1])
    return found


def set_many(values: dict[str, Resolved], ttl: int) -> None:
    cache = point_cache()
    items = list(values.items())
    for start in range(0, len(items), BATCH):
        cache.set_many(dict(items[start : start + BATCH]), timeout=ttl)


def clear() -> None:
    point_cache().clear()
