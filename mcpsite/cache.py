"""A database cache whose `incr` is atomic, so rate-limit counters shared by processes are exact.

Django's DatabaseCache increments with a read then a write; two processes can read the same count
and both write count+1 (django-ratelimit refuses it for that reason). Here the increment is one
UPDATE on PostgreSQL (a stored function: the row lock the UPDATE takes queues concurrent ones), or
runs in a transaction that holds the row: `SELECT … FOR UPDATE` on PostgreSQL for values that function
does not read; on SQLite the IMMEDIATE transaction mode (settings.py) takes the database write lock at BEGIN.

Counters are not worth a disk flush on the request path: see `commit_without_flush_wait`.
"""

import base64
import contextlib
import pickle
import threading

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.db import DatabaseCache
from django.db import connection as default_connection
from django.db import connections, router, transaction
from django.utils import timezone


def commit_without_flush_wait(connection=default_connection) -> None:
    """Let this transaction's COMMIT return before PostgreSQL flushes its WAL (`synchronous_commit = off`).

    For the bookkeeping of every call (rate counters, audit rows): the flush (fsync) was the largest cost of a
    read-only MCP call. The commit is still atomic and visible at once to every process; what a crash of the
    database server (not of a site process) can lose is the last 3 x wal_writer_delay (600 ms by default) of such
    commits. SQLite in WAL mode with synchronous=NORMAL (settings.py) already commits without a flush.
    Call it first inside `transaction.atomic()`.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


# SQLite: this process's increments queue here rather than on the database lock, whose busy handler sleeps up to
# 100 ms between retries (most of the MCP path's time under 16 connections, bench/bench_serving.py). Not taken
# inside a caller's transaction, which may already hold the database lock another increment waits for.
_sqlite_write_lock = threading.Lock()


class AtomicDatabaseCache(DatabaseCache):
    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        # django-ratelimit adds every counter before incrementing it, and the counter of the current window is
        # nearly always there already: seeing that is one read, not a write transaction with a COUNT(*).
        if self.has_key(key, version=version):
            return False
        return super().add(key, value, timeout, version)

    def incr(self, key, delta=1, version=None):
        """Add `delta` to a live counter atomically; ValueError for a missing or expired key, like Django.

        PostgreSQL: one statement, the stored function of migration mcpsite 0007 (the locking SELECT and UPDATE in
        a transaction of their own were four round trips on every call's path: py-spy on bench_cinema_booking).
        It reads only integer pickles; for anything else, and on SQLite, the transaction below.
        """
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        made_key = self.make_and_validate_key(key, version=version)
        now = connection.ops.adapt_datetimefield_value(timezone.now().replace(microsecond=0))
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT mcpsite_cache_incr(%s, %s, %s, %s)", [self._table, made_key, delta, now])
                (counted,) = cursor.fetchone()
            if counted is not None:
                return counted
        return self._incr_in_transaction(connection, db, key, made_key, delta, now)

    def _incr_in_transaction(self, connection, db, key, made_key, delta, now):
        """incr in a transaction of two statements (Django's get-then-set took five, with a COUNT(*) of the whole
        table for culling)."""
        table = connection.ops.quote_name(self._table)
        # Locks the counter row (PostgreSQL) so concurrent increments queue behind this one.
        lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
        # PostgreSQL: commit_without_flush_wait's setting made by the locking SELECT itself (set_config(…, true) is
        # SET LOCAL), one round trip fewer on every call's path (bench_cinema_booking).
        no_flush_wait = "set_config('synchronous_commit', 'off', true), " if connection.vendor == "postgresql" else ""
        queued = connection.vendor == "sqlite" and not connection.in_atomic_block
        queue = _sqlite_write_lock if queued else contextlib.nullcontext()
        with queue, transaction.atomic(using=db), connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {no_flush_wait}value FROM {table} WHERE cache_key = %s AND expires > %s{lock}", [made_key, now]
            )
            row = cursor.fetchone()
            if row is None:
                raise ValueError(f"Key '{key}' not found")
            # Rows are written only by this cache, as in Django's own DatabaseCache.get.
            value = pickle.loads(base64.b64decode(connection.ops.process_clob(row[-1]).encode())) + delta  # noqa: S301
            stored = base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
            cursor.execute(f"UPDATE {table} SET value = %s WHERE cache_key = %s", [stored, made_key])
        return value
