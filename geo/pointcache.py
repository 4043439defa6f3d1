"""The cache of resolved integer points, so repeated points skip GaluchatAPI.

Keyed by granularity, mapset, unit and the integer point, in the `geo` cache alias that settings always declare:
a process-local LocMemCache sized for it, or Redis when REDIS_URL is set. Never the `default` alias: a database
cache row per point (10,000 a call) would crowd the rate-limit counters stored beside them.
"""

from __future__ import annotations

import pickle
import threading
import time
from collections import OrderedDict
from decimal import Decimal
from itertools import chain
from typing import Any

from django.core.cache import BaseCache, caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT, default_key_func

from .merge import Resolved

ALIAS = "geo"
BATCH = 500  # keys per get_many/set_many (bounded IN lists on database caches)


class _Store:
    """One LOCATION's entries, shared by the backend instances of every thread (Django makes one per thread):
    key -> value in least-recently-used-first order, and key -> expiry (None: never)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.values: OrderedDict[str, Any] = OrderedDict()
        self.expiry: dict[str, float | None] = {}


_stores: dict[str, _Store] = {}
_stores_lock = threading.Lock()


class PointMemoryCache(BaseCache):
    """A process-local LRU cache (Django's custom cache backend interface) whose batches take its lock once.

    Django's LocMemCache loops get_many/set_many over get()/set(), each key paying a lock round and the memcached key
    check (a regex), which for a cold 10,000-point call costs more than the rest of the call. Here a batch is one pass
    under one lock, with one clock reading; keys made by cache_keys() are ASCII, short and space-free, so the batches
    skip the memcached check. Same semantics as LocMemCache otherwise (geo/tests/test_pointcache.py runs each behaviour
    on both): misses, expiry, versions, MAX_ENTRIES with CULL_FREQUENCY, values copied.

    A resolved point, a pair of strings or None, is stored as it is: it cannot change, so the copy pickling makes
    protects nothing. Any other value is pickled, as LocMemCache does.
    """

    pickle_protocol = pickle.HIGHEST_PROTOCOL

    def __init__(self, name: str, params: dict[str, Any]) -> None:
        super().__init__(params)
        options = params.get("OPTIONS", {})
        self.max_entries = int(options.get("MAX_ENTRIES", params.get("max_entries", 300)))
        self.cull_frequency = int(options.get("CULL_FREQUENCY", params.get("cull_frequency", 3)))
        with _stores_lock:
            self.store = _stores.setdefault(name, _Store())

    # --- single keys -------------------------------------------------------------------------------------------

    def get(self, key, default=None, version=None):
        made = self._key(key, version)
        with self.store.lock:
            if not self._live(made, time.time()):
                return default
            value = self.store.values[made]
            self.store.values.move_to_end(made)
        return _thaw(value)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        made = self._key(key, version)
        with self.store.lock:
            self._put([(made, self._freeze(value))], self.get_backend_timeout(timeout))

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        made = self._key(key, version)
        with self.store.lock:
            if self._live(made, time.time()):
                return False
            self._put([(made, self._freeze(value))], self.get_backend_timeout(timeout))
            return True

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        made = self._key(key, version)
        with self.store.lock:
            if not self._live(made, time.time()):
                return False
            self.store.expiry[made] = self.get_backend_timeout(timeout)
            return True

    def delete(self, key, version=None):
        made = self._key(key, version)
        with self.store.lock:
            return self._drop(made)

    def has_key(self, key, version=None):
        made = self._key(key, version)
        with self.store.lock:
            return self._live(made, time.time())

    def incr(self, key, delta=1, version=None):
        made = self._key(key, version)
        with self.store.lock:
            if not self._live(made, time.time()):
                raise ValueError(f"Key '{key}' not found")
            value = _thaw(self.store.values[made]) + delta
            self.store.values[made] = self._freeze(value)
            self.store.values.move_to_end(made)
            return value

    def clear(self):
        with self.store.lock:
            self.store.values.clear()
            self.store.expiry.clear()

    # --- batches -----------------------------------------------------------------------------------------------

    def get_many(self, keys, version=None):
        keys = list(keys)
        made = self._keys(keys, version)
        found = {}
        values, expiry, now = self.store.values, self.store.expiry, time.time()
        with self.store.lock:
            for key, original in zip(made, keys, strict=True):
                expires = expiry.get(key, -1)
                if expires is None or expires > now:
                    found[original] = values[key]
                    values.move_to_end(key)
                elif expires != -1:
                    self._drop(key)  # expired (a missing key, -1, has nothing to drop)
        if set(map(type, found.values())) <= {tuple}:
            return found  # resolved points as stored (the common case): nothing to unpickle
        return {key: _thaw(value) for key, value in found.items()}

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        made = self._keys(data, version)
        values = list(data.values())
        frozen = values if _all_resolved(values) else list(map(self._freeze, values))
        with self.store.lock:
            self._put(zip(made, frozen, strict=True), self.get_backend_timeout(timeout))  # one clock reading
        return []

    def delete_many(self, keys, version=None):
        made = self._keys(list(keys), version)
        with self.store.lock:
            for key in made:
                self._drop(key)

    # --- inside the lock ---------------------------------------------------------------------------------------

    def _live(self, key: str, now: float) -> bool:
        expires = self.store.expiry.get(key, -1)
        if expires is None or (expires != -1 and expires > now):
            return True
        if expires != -1:
            self._drop(key)
        return False

    def _put(self, items, expires: float | None) -> None:
        values, expiry = self.store.values, self.store.expiry
        for key, value in items:
            if key not in values and len(values) >= self.max_entries:
                self._cull()
            values[key] = value
            values.move_to_end(key)
            expiry[key] = expires

    def _cull(self) -> None:
        """Drop the least recently used 1/CULL_FREQUENCY of the entries (all of them when it is 0), as LocMemCache
        does."""
        values = self.store.values
        count = len(values) if self.cull_frequency == 0 else max(len(values) // self.cull_frequency, 1)
        for _ in range(count):
            key, _value = values.popitem(last=False)
            self.store.expiry.pop(key, None)

    def _drop(self, key: str) -> bool:
        self.store.expiry.pop(key, None)
        return self.store.values.pop(key, _MISSING) is not _MISSING

    # --- keys and values ---------------------------------------------------------------------------------------

    def _key(self, key, version) -> str:
        made = self.make_key(key, version=version)
        self.validate_key(made)
        return made

    def _keys(self, keys, version) -> list[str]:
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


_MISSING = object()


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
