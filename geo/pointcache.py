"""The cache of resolved integer points, so repeated points skip GaluchatAPI.

Keyed by granularity, mapset, unit and the integer point, in the `geo` cache alias that settings always declare:
a process-local LocMemCache sized for it, or Redis when REDIS_URL is set. Never the `default` alias: a database
cache row per point (10,000 a call) would crowd the rate-limit counters stored beside them.
"""

from __future__ import annotations

import pickle
import time
from decimal import Decimal
from itertools import chain

from django.core.cache import BaseCache, caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT, default_key_func
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
        keys = list(keys)
        made = self._make_keys(keys, version)
        found = {}
        cache, expire_info, now = self._cache, self._expire_info, time.time()
        with self._lock:
            for key, original in zip(made, keys, strict=True):
                expiry = expire_info.get(key, -1)
                if expiry is None or expiry > now:
                    found[original] = cache[key]
                    cache.move_to_end(key, last=False)
                elif expiry != -1:
                    self._delete(key)  # expired (a missing key, -1, has nothing to delete)
        if set(map(type, found.values())) <= {tuple}:
            return found  # resolved points as stored (the common case): nothing to unpickle
        return {key: _thaw(value) for key, value in found.items()}

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        key = self.make_key(key, version=version)
        self.validate_key(key)
        with self._lock:
            self._set(key, self._freeze(value), timeout)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        made = self._make_keys(data, version)
        values = list(data.values())
        frozen = values if _all_resolved(values) else list(map(self._freeze, values))
        cache, expire_info = self._cache, self._expire_info
        with self._lock:
            expiry = self.get_backend_timeout(timeout)  # one clock reading for the batch
            for key, value in zip(made, frozen, strict=True):
                if len(cache) >= self._max_entries:
                    self._cull()
                cache[key] = value
                cache.move_to_end(key, last=False)
                expire_info[key] = expiry
        return []

    def _make_keys(self, keys, version) -> list[str]:
        """make_key() of each key: the default key function's format applied in one pass."""
        if self.key_func is not default_key_func:
            return [self.make_key(key, version=version) for key in keys]
        return list(map(f"{self.key_prefix}:{self.version if version is None else version}:{{}}".format, keys))

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


def _all_resolved(values: list) -> bool:
    """Whether every value is a resolved point, a pair of str or None (stored as it is), in C passes."""
    return (
        set(map(type, values)) <= {tuple}
        and set(map(len, values)) <= {2}
        and set(map(type, chain.from_iterable(values))) <= {str, type(None)}
    )


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
        batch = cache.get_many(keys[start : start + BATCH])
        if set(map(type, batch.values())) <= {tuple} and set(map(len, batch.values())) <= {2}:
            found.update(batch)  # pairs as stored (the common case), checked in C passes
            continue
        for key, value in batch.items():
            if isinstance(value, tuple | list) and len(value) == 2:
                found[key] = (value[0], value[1])
    return found


def set_many(values: dict[str, Resolved], ttl: int) -> None:
    cache = point_cache()
    if len(values) <= BATCH:
        cache.set_many(values, timeout=ttl)
        return
    items = list(values.items())
    for start in range(0, len(items), BATCH):
        cache.set_many(dict(items[start : start + BATCH]), timeout=ttl)


def clear() -> None:
    point_cache().clear()
