"""The cache of resolved integer points, so repeated points skip GaluchatAPI.

Keyed by granularity, mapset, unit and the integer point, in the `geo` cache alias that settings always declare:
a process-local LocMemCache sized for it, or Redis when REDIS_URL is set. Never the `default` alias: a database
cache row per point (10,000 a call) would crowd the rate-limit counters stored beside them.
"""

from __future__ import annotations

from decimal import Decimal

from django.core.cache import BaseCache, caches

from .merge import Resolved

ALIAS = "geo"
BATCH = 500  # keys per get_many/set_many (bounded IN lists on database caches)


def point_cache() -> BaseCache:
    return caches[ALIAS]


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
