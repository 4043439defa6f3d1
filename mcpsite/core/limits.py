"""Rate limits: "N per period" means at most N admitted in any period, exactly, whichever process counts.

A sliding window log (decision 0003): a rate's window keeps the times of its last N admissions in a ring of N
slots, and a call is admitted when the oldest of them has left the period. Each take reads and writes one slot and
the window's position, so its cost does not grow with N. Refused calls are not logged: a client that keeps calling
is admitted again as soon as a slot frees, never more than N in any period.

Stores: the database (our tables RateWindow and RateSlot; PostgreSQL takes in one call of a stored function under
the window's row lock, SQLite in a write transaction) or, when the default cache is Redis (REDIS_URL), a Redis hash
updated by a Lua script (atomic in Redis). Times come from the limiter's clock, injectable for tests.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from django.conf import settings
from django.db import connections, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper

from .db import has_one_writer, has_stored_functions
from .errors import RateLimited

API_KEY_GROUP = "mcp.apikey"

_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_MAX_BUCKET = 200  # RateWindow.bucket's max_length


def parse_rate(rate: str) -> tuple[int, int]:
    """`"100/m"` → (100, 60); `"5/15m"` → (5, 900). Units s, m, h, d. ValueError for anything else."""
    match = _RATE.match(rate or "")
    if match is None or int(match[1]) < 1:
        raise ValueError(f"Not a rate: {rate!r} (expected e.g. 100/m or 5/15m)")
    return int(match[1]), int(match[2] or 1) * _UNITS[match[3]]


def _bucket(group: str, key: str, limit: int, period: int) -> str:
    """One window per (group, rate, key): a key whose rate changes starts a window of its new rate."""
    bucket = f"{group}:{limit}/{period}:{key}"
    if len(bucket) > _MAX_BUCKET:
        bucket = f"{group[:40]}:{hashlib.sha256(bucket.encode()).hexdigest()}"
    return bucket


class Store(Protocol):
    def take(self, bucket: str, limit: int, period: int, now: float) -> float:
        """Admit one call at `now`: 0.0, or the seconds (> 0) until one would be admitted."""

    def wait(self, bucket: str, limit: int, period: int, now: float) -> float:
        """take's answer without taking: 0.0 when a call would be admitted now."""

    def give_back(self, bucket: str, limit: int) -> None:
        """Free the latest admission's slot."""


# --- the database ----------------------------------------------------------------------------------------------

# SQLite: this process's takes queue here rather than on the database lock, whose busy handler sleeps up to 100 ms
# between retries. Not taken inside a caller's transaction, which may already hold the lock another take waits for.
_sqlite_write_lock = threading.Lock()


@contextlib.contextmanager
def _write_transaction(alias: str, connection: BaseDatabaseWrapper) -> Iterator[Any]:
    """A cursor in a transaction of its own (on SQLite queued behind this process's other takes)."""
    queued = has_one_writer(connection) and not connection.in_atomic_block
    with (
        _sqlite_write_lock if queued else contextlib.nullcontext(),
        transaction.atomic(using=alias),
        connection.cursor() as cursor,
    ):
        yield cursor


class DatabaseStore:
    """Takes in a transaction: the window's row locked first (`SELECT … FOR UPDATE` on PostgreSQL; SQLite's
    IMMEDIATE transactions, settings.py, take the database's write lock at BEGIN)."""

    lock_rows = True  # the tests' control turns the row lock off to show the race it prevents

    @staticmethod
    def _tables(connection: BaseDatabaseWrapper) -> tuple[str, str]:
        from mcpsite.models import RateSlot, RateWindow

        quote = connection.ops.quote_name
        return quote(RateWindow._meta.db_table), quote(RateSlot._meta.db_table)

    @staticmethod
    def _connection() -> tuple[str, BaseDatabaseWrapper]:
        from mcpsite.models import RateWindow

        alias = router.db_for_write(RateWindow)
        return alias, connections[alias]

    def _position(
        self, cursor: CursorWrapper, connection: BaseDatabaseWrapper, bucket: str, *, lock: bool
    ) -> tuple[int, float, float | None] | None:
        """(next slot, latest admission, the next slot's time or None), or None for a window not yet made."""
        windows, slots = self._tables(connection)
        if not (lock and connection.features.has_select_for_update):
            cursor.execute(
                f"SELECT w.next_slot, w.last_at, s.at FROM {windows} w LEFT JOIN {slots} s"
                " ON s.bucket = w.bucket AND s.slot = w.next_slot WHERE w.bucket = %s",
                [bucket],
            )
            return cursor.fetchone()
        # The slot is read after the lock is held, by a statement of its own: a join would give the slot of the
        # snapshot taken before waiting for the lock, which a concurrent take may have written meanwhile.
        cursor.execute(f"SELECT next_slot, last_at FROM {windows} WHERE bucket = %s FOR UPDATE", [bucket])
        window = cursor.fetchone()
        if window is None:
            return None
        cursor.execute(f"SELECT at FROM {slots} WHERE bucket = %s AND slot = %s", [bucket, window[0]])
        slot = cursor.fetchone()
        return window[0], window[1], None if slot is None else slot[0]

    def take(self, bucket: str, limit: int, period: int, now: float) -> float:
        alias, connection = self._connection()
        windows, slots = self._tables(connection)
        with _write_transaction(alias, connection) as cursor:
            position = self._position(cursor, connection, bucket, lock=self.lock_rows)
            if position is None:
                cursor.execute(
                    f"INSERT INTO {windows} (bucket, next_slot, last_at, period) VALUES (%s, 0, %s, %s)"
                    " ON CONFLICT (bucket) DO NOTHING",
                    [bucket, now, period],
                )
                position = self._position(cursor, connection, bucket, lock=self.lock_rows)
            assert position is not None
            slot, last_at, oldest = position
            at = max(now, last_at)  # admissions in the ring stay in time order
            if oldest is not None and oldest > at - period:
                return oldest + period - now
            cursor.execute(
                f"INSERT INTO {slots} (bucket, slot, at) VALUES (%s, %s, %s)"
                " ON CONFLICT (bucket, slot) DO UPDATE SET at = excluded.at",
                [bucket, slot, at],
            )
            cursor.execute(
                f"UPDATE {windows} SET next_slot = %s, last_at = %s WHERE bucket = %s",
                [(slot + 1) % limit, at, bucket],
            )
        return 0.0

    def wait(self, bucket: str, limit: int, period: int, now: float) -> float:
        _alias, connection = self._connection()
        with connection.cursor() as cursor:
            position = self._position(cursor, connection, bucket, lock=False)
        return _wait(position, period, now)

    def give_back(self, bucket: str, limit: int) -> None:
        alias, connection = self._connection()
        windows, slots = self._tables(connection)
        with _write_transaction(alias, connection) as cursor:
            position = self._position(cursor, connection, bucket, lock=True)
            if position is None:
                return
            slot = (position[0] - 1) % limit
            cursor.execute(f"DELETE FROM {slots} WHERE bucket = %s AND slot = %s", [bucket, slot])
            cursor.execute(f"UPDATE {windows} SET next_slot = %s WHERE bucket = %s", [slot, bucket])

    def prune(self, now: float) -> int:
        """Delete the windows whose every slot is free, with their slots; returns how many windows."""
        alias, connection = self._connection()
        windows, slots = self._tables(connection)
        with transaction.atomic(using=alias), connection.cursor() as cursor:
            # Deleting the window rows first locks them (PostgreSQL): a concurrent take of one of them waits, then
            # finds it gone and starts afresh, after these slots are gone too.
            cursor.execute(f"DELETE FROM {windows} WHERE last_at + period < %s RETURNING bucket", [now])
            buckets = [row[0] for row in cursor.fetchall()]
            for start in range(0, len(buckets), 500):
                chunk = buckets[start : start + 500]
                marks = ", ".join(["%s"] * len(chunk))
                cursor.execute(f"DELETE FROM {slots} WHERE bucket IN ({marks})", chunk)
        return len(buckets)


class SqliteStore(DatabaseStore):
    """An admission is one statement: the window's UPDATE, made only where its oldest slot has left the period, and
    its trigger (migration mcpsite 0010) writes the admitted slot. One statement is one write transaction of its
    own (SQLite takes the database's write lock when the statement starts, as BEGIN IMMEDIATE does), so it is as
    exact as DatabaseStore's take, without the transaction's BEGIN, read and COMMIT around it.

    The take is on the path of every MCP call (README, Speed: MCP ÷ bare, goal >= 0.80), so it is one statement,
    not three. A window not made yet, and a call not admitted (whose wait must be read), take DatabaseStore's path,
    which decides afresh."""

    def take(self, bucket: str, limit: int, period: int, now: float) -> float:
        alias, connection = self._connection()
        windows, slots = self._tables(connection)
        queued = not connection.in_atomic_block
        with _sqlite_write_lock if queued else contextlib.nullcontext(), connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {windows} SET next_slot = (next_slot + 1) %% %s, last_at = max(last_at, %s)"
                f" WHERE bucket = %s AND NOT EXISTS (SELECT 1 FROM {slots} s WHERE s.bucket = {windows}.bucket"
                f" AND s.slot = {windows}.next_slot AND s.at > max(%s, {windows}.last_at) - %s) RETURNING next_slot",
                [limit, now, bucket, now, period],
            )
            if cursor.fetchall():
                return 0.0
        return super().take(bucket, limit, period, now)


class PostgresStore(DatabaseStore):
    """A take is one call of the stored function `mcpsite_rate_take` (migration mcpsite 0009): the same steps as
    DatabaseStore.take under the same row lock, in one round trip instead of six."""

    def take(self, bucket: str, limit: int, period: int, now: float) -> float:
        _alias, connection = self._connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT mcpsite_rate_take(%s, %s, %s, %s)", [bucket, limit, period, now])
            return float(cursor.fetchone()[0])


def _wait(position: tuple[int, float, float | None] | None, period: int, now: float) -> float:
    """What a take at `now` would answer for a window at `position` (next slot, latest admission, its time)."""
    if position is None or position[2] is None or position[2] <= max(now, position[1]) - period:
        return 0.0
    return position[2] + period - now


# --- Redis -------------------------------------------------------------------------------------------------------

# The same ring in one Redis hash per window: field `n` (next slot), `last` (latest admission), `s<i>` (slot times).
# The hash expires a period after its latest admission, when every slot is free.
_TAKE = """
local limit, period, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'n', 'last')
local n = tonumber(state[1]) or 0
local at = math.max(now, tonumber(state[2]) or now)
local oldest = tonumber(redis.call('HGET', KEYS[1], 's' .. n))
if oldest and oldest > at - period then
    return string.format('%.6f', oldest + period - now)
end
redis.call('HSET', KEYS[1], 's' .. n, string.format('%.6f', at), 'n', (n + 1) % limit, 'last',
           string.format('%.6f', at))
redis.call('PEXPIRE', KEYS[1], math.ceil(period * 1000))
return '0'
"""
_GIVE_BACK = """
local n = tonumber(redis.call('HGET', KEYS[1], 'n'))
if not n then return 0 end
n = (n - 1) % tonumber(ARGV[1])
redis.call('HDEL', KEYS[1], 's' .. n)
redis.call('HSET', KEYS[1], 'n', n)
return 1
"""
_REDIS_PREFIX = "mcpsite:rate:"


class RedisStore:
    _scripts: weakref.WeakKeyDictionary[Any, tuple[Any, Any]] = weakref.WeakKeyDictionary()

    def __init__(self, client: Any) -> None:
        self.client = client
        scripts = self._scripts.get(client)
        if scripts is None:
            scripts = (client.register_script(_TAKE), client.register_script(_GIVE_BACK))
            self._scripts[client] = scripts
        self._take, self._give_back = scripts

    def take(self, bucket: str, limit: int, period: int, now: float) -> float:
        return float(self._take(keys=[_REDIS_PREFIX + bucket], args=[limit, period, repr(now)]))

    def wait(self, bucket: str, limit: int, period: int, now: float) -> float:
        key = _REDIS_PREFIX + bucket
        n, last = self.client.hmget(key, "n", "last")
        if n is None:
            return 0.0
        oldest = self.client.hget(key, f"s{int(n)}")
        return _wait((int(n), float(last), None if oldest is None else float(oldest)), period, now)

    def give_back(self, bucket: str, limit: int) -> None:
        self._give_back(keys=[_REDIS_PREFIX + bucket], args=[limit])


def _store() -> Store:
    if "redis" in settings.CACHES["default"]["BACKEND"].lower():
        from django_redis import get_redis_connection

        return RedisStore(get_redis_connection("default"))
    _alias, connection = DatabaseStore._connection()
    if has_stored_functions(connection):
        return PostgresStore()
    return SqliteStore() if has_one_writer(connection) else DatabaseStore()


# --- the limiter -------------------------------------------------------------------------------------------------


class RateLimiter:
    """Counts calls per (group, key) at a rate such as "100/m". `clock` gives seconds since the epoch: every
    process must agree on it (one host's clock, or NTP-synchronised hosts)."""

    def __init__(self, clock: Callable[[], float] = time.time, store: Callable[[], Store] = _store) -> None:
        self.clock = clock
        self.store = store

    def take(self, *, group: str, key: str, rate: str) -> float:
        """Count one call: 0.0 when admitted, else the seconds until a call would be (nothing is counted)."""
        limit, period = parse_rate(rate)
        return self.store().take(_bucket(group, key, limit, period), limit, period, self.clock())

    def wait(self, *, group: str, key: str, rate: str) -> float:
        """Seconds until a call would be admitted (0.0: now), counting nothing."""
        limit, period = parse_rate(rate)
        return self.store().wait(_bucket(group, key, limit, period), limit, period, self.clock())

    def give_back(self, *, group: str, key: str, rate: str) -> None:
        limit, period = parse_rate(rate)
        self.store().give_back(_bucket(group, key, limit, period), limit)


limiter = RateLimiter()


def over_limit(*, group: str, key: str, rate: str) -> bool:
    """Count one call by `key` in `group`; True (nothing counted) when `rate` is already spent."""
    return limiter.take(group=group, key=key, rate=rate) > 0


def give_back(*, group: str, key: str, rate: str) -> None:
    """Uncount one call that over_limit admitted (an attempt that turned out not to be one to limit, such as the
    right password): frees the window's latest slot, atomically like the take."""
    limiter.give_back(group=group, key=key, rate=rate)


def retry_after(*, group: str, key: str, rate: str) -> int | None:
    """Whole seconds until `key` may call again in `group` (a `Retry-After`), None when it may now."""
    seconds = limiter.wait(group=group, key=key, rate=rate)
    return max(1, math.ceil(seconds)) if seconds > 0 else None


def rate_windows_prune() -> int:
    """Delete the database windows that no longer hold an admission (Redis expires its own)."""
    return DatabaseStore().prune(limiter.clock())


class RatedKey(Protocol):
    """What the limits need of an API key (mcpsite.models.ApiKey): its id and its rate ("" for the default)."""

    pk: Any
    rate: str


def _api_key_rate(api_key: RatedKey) -> dict[str, str]:
    return {"group": API_KEY_GROUP, "key": str(api_key.pk), "rate": api_key.rate or settings.MCP_DEFAULT_RATE}


def over_api_key_rate(api_key: RatedKey) -> bool:
    """Count one request by this key; True when it is past the key's rate (default 100/min)."""
    return over_limit(**_api_key_rate(api_key))


def enforce_api_key_rate(api_key: RatedKey | None) -> None:
    """One request by this key; RateLimited (429) past the key's rate. None: stdio and other trusted local callers."""
    if api_key is not None and over_api_key_rate(api_key):
        raise RateLimited()


def api_key_retry_after(api_key: RatedKey) -> int | None:
    """Whole seconds until the key may call again when it is over its rate (the `Retry-After` of the 429 it got);
    None when it is not, so a 429 from another limit is not given the key's wait."""
    return retry_after(**_api_key_rate(api_key))
