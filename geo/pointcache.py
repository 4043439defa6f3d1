"""The cache of resolved integer points, so repeated points skip GaluchatAPI.

Keyed by granularity, mapset, unit and the integer point, in the `geo` cache alias that settings always declare:
a process-local LocMemCache sized for it, or Redis when REDIS_URL is set. Never the `default` alias: a database
cache row per point (10,000 a call) would crowd the rate-limit counters stored beside them.
"""

from __future__ import annotations

import pickle
from decimal import Decimal

from django.core.cache import BaseCache, caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.locmem import LocMemCache

from .merge import Resolved

ALIAS = "geo"
BATCH = 500  # keys per get_many/set_many (bounded IN lists on database caches)


class PointMemoryCache(LocMemCache):
    """LocMemCache whose get_many/set_many take the lock once per batch instead of once per key.

    Django's versions loop over get()/set(), and each key pays a lock round and the memcached
    portability check (a lazily compiled regex behind a proxy): 2,500 distinct points cost more
    than the rest of a cold 10,000-point call (profiled, bench/bench_geo.py). The check only warns
    about memcached, which never holds these keys (cache_keys() makes them: ASCII, no spaces, short),
    so the batches skip it; expiry and culling are LocMemCache's own.

    A resolved point, a pair of strings or None, is stored as it is: it cannot change, so the copy pickling makes
    (LocMemCache's protection against a caller mutating a cached value) protects nothing, and pickling 2,500 of
    them on a cold call and unpickling them on a warm one was a tenth of the cache's share (cProfile). Any other
    value is pickled as LocMemCache does.
    """

    def get(self, key, default=None, version=None):
        key = self.make_key(key, version=version)
        self.validate_key(key)
        with self._lock:
            if self._has_expired(key):
                self._delete(key)
                return default
            value = self._cache[key]
            self._cache.move_to_end(key, last=False)
        return _thaw(value)

    def get_many(self, keys, version=None):
        made = {self.make_key(key, version=version): key for key in keys}
        pickled = {}
        with self._lock:
            for key, original in made.items():
                if self._has_expired(key):
                    self._delete(key)
                    continue
                pickled[original] = self._cache[key]
                self._cache.move_to_end(key, last=False)
        return {key: _thaw(value) for key, value in pickled.items()}

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        key = self.make_key(key, version=version)
        self.validate_key(key)
        with self._lock:
            self._set(key, self._freeze(value), timeout)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        pickled = [(self.make_key(key, version=version), self._freeze(value)) for key, value in data.items()]
        with self._lock:
            for key, value in pickled:
                self._set(key, value, timeout)
        return []

    def _freeze(self, value):
        if type(value) is tuple and len(value) == 2:  # a resolved point, (code, address)
            code, address = value
            if (code is None or type(code) is str) and (address is None or type(address) is str):
                return value
        return pickle.dumps(value, self.pickle_protocol)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        key = self.make_key(key, version=version)
        self.validate_key(key)
        with self._lock:
            if self._has_expired(key):
                self._set(key, self._freeze(value), timeout)
                return True
            return False


def _thaw(value):
    # Bytes this process pickled itself into its own memory (as LocMemCache.get does), or a stored tuple.
    return value if type(value) is tuple else pickle.loads(value)  # noqa: S301


def point_cache() -> BaseCache:
    return caches[ALIAS]


def cache_keys(granularity: str, mapset: str, unit: Decimal, points) -> dict[tuple[int, int], str]:
    """The key of each point; the shared prefix is formatted once per call, not once per point."""
    prefix = f"geo:pt:{granularity}:{mapset}:{unit.normalize():f}:"
    return {point: f"{prefix}{point[0]}:{point[1]}" for point in points}


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
