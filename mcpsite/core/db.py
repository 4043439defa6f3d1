"""What the database behind a connection can do, asked by name in this one module; and the platform's few statements
below the ORM (docs/decisions/0012-raw-sql.md): each of a kind the ORM has no expression for, or (`insert_rows`) one
that a benchmark's goal needs.

Code that takes a backend-specific path asks one of these (or Django's `connection.features`, where it already names
the capability: `has_select_for_update`, `supports_transactions`, ...), never `connection.vendor` itself: the reason
for the branch is then in its name, and a third backend is added here (docs/decisions/0012-raw-sql.md). The site
runs on PostgreSQL and on SQLite. Migrations ask through `RunSQLOn` (mcpsite/core/migrations.py) instead.
"""

import contextlib
import contextvars
import functools
import gc
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from django.db import connection as default_connection
from django.db import connections, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import DateTimeField, Field, Model, QuerySet
from django.db.models.lookups import GreaterThanOrEqual


def _postgresql(connection: BaseDatabaseWrapper) -> bool:
    return connection.vendor == "postgresql"


def _sqlite(connection: BaseDatabaseWrapper) -> bool:
    return connection.vendor == "sqlite"


def has_stored_functions(connection: BaseDatabaseWrapper) -> bool:
    """The stored functions and triggers of the PostgreSQL-only migrations are there (`RunSQLOn("postgresql")`:
    `cinema_reservation_id_next`, `mcpsite_rate_take`, the ledger's balance triggers), and PostgreSQL's SQL that
    calls them (one-statement writes with CTEs, `unnest`, arrays)."""
    return _postgresql(connection)


def has_listen_notify(connection: BaseDatabaseWrapper) -> bool:
    """`LISTEN`/`NOTIFY`: a channel between every process using the database."""
    return _postgresql(connection)


def has_one_writer(connection: BaseDatabaseWrapper) -> bool:
    """One write transaction at a time in the whole database (SQLite's database lock): writers queue, and a writer
    of another connection is refused rather than waited for in a shared-cache in-memory database."""
    return _sqlite(connection)


def sums_decimals_exactly(connection: BaseDatabaseWrapper) -> bool:
    """SUM over a DecimalField is exact (`numeric`); SQLite stores decimals as REAL and its sums drift by cents."""
    return not _sqlite(connection)


def has_python_functions(connection: BaseDatabaseWrapper) -> bool:
    """SQL functions written in Python can be registered on each connection (`sqlite3.Connection.create_function`)."""
    return _sqlite(connection)


# How many Python SQL functions run now, in any thread: the garbage collector is off while any does.
_in_python_functions = 0
_in_python_functions_lock = threading.Lock()


def python_function[**P, R](func: Callable[P, R]) -> Callable[P, R]:
    """`func` as a SQL function to register with `create_function`: no garbage collection while it runs. A
    collection inside the callback can finalize another, unreferenced sqlite3 connection, whose close waits for
    the shared-cache mutex the running statement holds (an in-memory database shared between connections, as the
    tests' is): the thread would wait for itself."""

    @functools.wraps(func)
    def called(*args: P.args, **kwargs: P.kwargs) -> R:
        global _in_python_functions
        with _in_python_functions_lock:
            _in_python_functions += 1
            gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            with _in_python_functions_lock:
                _in_python_functions -= 1
                if not _in_python_functions:
                    gc.enable()

    return called


def statements_are_round_trips(connection: BaseDatabaseWrapper) -> bool:
    """Each statement goes to a server and waits for its answer (PostgreSQL); SQLite runs it in the process."""
    return _postgresql(connection)


def has_fts5(connection: BaseDatabaseWrapper) -> bool:
    """SQLite's FTS5 full-text tables (whether a migration could create them: see the app's own check)."""
    return _sqlite(connection)


def has_trigram_indexes(connection: BaseDatabaseWrapper) -> bool:
    """pg_trgm's GIN indexes for LIKE '%…%', GIN indexes over expressions, and planner statistics worth gathering
    after a bulk load (ANALYZE, `gin_clean_pending_list`)."""
    return _postgresql(connection)


def has_planner_likelihood(connection: BaseDatabaseWrapper) -> bool:
    """`likelihood(X, p)` tells the planner how often X holds. SQLite (built without STAT4, as Python's is) takes a
    range on an indexed column to hold for a quarter of the rows whatever ANALYZE found; PostgreSQL estimates ranges
    from its statistics and has no such function."""
    return _sqlite(connection)


class RareAtLeast(GreaterThanOrEqual):
    """`lhs >= rhs` for a condition few rows meet (`filter(RareAtLeast(F("created_at"), since))`): on SQLite said
    to the planner, so it reads that range from its index rather than every row in another index's order."""

    def as_sql(self, compiler: Any, connection: BaseDatabaseWrapper) -> tuple[str, Any]:
        sql, params = super().as_sql(compiler, connection)
        return (f"likelihood({sql}, 0.01)", params) if has_planner_likelihood(connection) else (sql, params)


def commit_without_flush_wait(connection: BaseDatabaseWrapper = default_connection) -> None:
    """Let this transaction's COMMIT return before PostgreSQL flushes its WAL (`synchronous_commit = off`).

    For the bookkeeping of every call (audit rows; the rate limiter's stored function does the same): the flush
    (fsync) would be the largest cost of a read-only MCP call. The commit is still atomic and visible at once to every
    process; what a crash of the database server (not of a site process) can lose is the last 3 x wal_writer_delay
    (600 ms by default) of such commits. SQLite in WAL mode with synchronous=NORMAL (settings.py) already commits
    without a flush. Call it first inside `transaction.atomic()`.
    """
    if _postgresql(connection):
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


# Set inside `hosting()`: the services' `durable()` blocks are then savepoints of the host's transaction.
_hosted: contextvars.ContextVar[bool] = contextvars.ContextVar("mcpsite.core.db.hosted", default=False)


def durable(using: str | None = None) -> transaction.Atomic:
    """A service's write transaction: the outermost one (`atomic(durable=True)`: its writes are committed when the
    block ends, and it refuses to run inside another), or, inside `hosting()`, a savepoint of the host's
    transaction, committed with it."""
    return transaction.atomic(using, durable=not _hosted.get())


def durable_write[**P, R](func: Callable[P, R]) -> Callable[P, R]:
    """`durable()` around each call of a service function."""

    @functools.wraps(func)
    def written(*args: P.args, **kwargs: P.kwargs) -> R:
        with durable():
            return func(*args, **kwargs)

    return written


@contextlib.contextmanager
def hosting(using: str | None = None) -> Iterator[None]:
    """An outermost transaction the services' `durable()` blocks run inside, as savepoints: what they write commits
    with it, when it ends, so a platform concern writes in the same transaction as a service (the idempotency
    claim, mcpsite/mcp/idempotency.py). Itself durable: it refuses to be nested, so the services' writes still
    commit when their caller returns.

    Where a statement is a round trip, the savepoints' RELEASE is not sent (`_releases_held_back`): the host's
    COMMIT or ROLLBACK ends every savepoint, and nothing names a released one again. Until then a block's savepoint
    stays open inside its parent, so a later ROLLBACK TO an outer one still undoes the block, as after a RELEASE.
    """
    connection = transaction.get_connection(using)
    with transaction.atomic(using, durable=True):
        token = _hosted.set(True)
        try:
            if not statements_are_round_trips(connection):
                yield
                return
            with connection.execute_wrapper(_releases_held_back):
                yield
        finally:
            _hosted.reset(token)


# A savepoint's release as transaction.atomic() sends it (DatabaseOperations.savepoint_commit_sql, the name quoted).
_RELEASE_SAVEPOINT = re.compile(r'RELEASE SAVEPOINT "[^"]+"')


def _releases_held_back(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
    """An execute wrapper (`connection.execute_wrapper`) that sends every statement but a RELEASE SAVEPOINT."""
    if params is None and _RELEASE_SAVEPOINT.fullmatch(sql):
        return None
    return execute(sql, params, many, context)


def update_with_flush_wait(model: type[Model], pk: Any, values: dict[str, Any]) -> None:
    """Set `values` (by attname) on `model`'s row `pk`, and undo `commit_without_flush_wait` for this transaction
    (bookkeeping that ran inside it, such as a rate take, may have set it): its COMMIT returns once PostgreSQL flushed
    its WAL, as a service's write needs. On PostgreSQL one statement (`set_config` in the UPDATE's FROM): a separate
    `SET LOCAL` is one more round trip on every keyed write (bench/bench_idempotency.py); elsewhere the ORM's update.
    """
    connection = connections[router.db_for_write(model)]
    if not _postgresql(connection):
        model._default_manager.filter(pk=pk).update(**values)
        return
    meta, quote = model._meta, connection.ops.quote_name
    table = quote(meta.db_table)
    columns = [str(meta.get_field(name).column) for name in values]  # type: ignore[union-attr]
    assignments = ", ".join(f"{quote(column)} = %s" for column in columns)
    sql = (
        f"UPDATE {table} SET {assignments} FROM (SELECT set_config('synchronous_commit', 'on', true)) AS flush "  # noqa: S608
        f"WHERE {table}.{quote(str(meta.pk.column))} = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values.values(), pk])


def database_answers(connection: BaseDatabaseWrapper = default_connection) -> None:
    """Raise unless the database answers a query (`SELECT 1`, no table involved): the health check."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def notify(channel: str, payload: str, connection: BaseDatabaseWrapper = default_connection) -> None:
    """PostgreSQL's NOTIFY (`has_listen_notify`) of `payload` on `channel`, delivered when the transaction commits."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [channel, payload])


# Coarse buckets of the non-negative integer column d, monotone in it, one significant digit wide: 0-9 one by one,
# 10-99 by tens, 100-999 by hundreds, and so on.
_BUCKET = (
    "CASE WHEN d < 10 THEN d WHEN d < 100 THEN 9 + d / 10 WHEN d < 1000 THEN 18 + d / 100 "
    "WHEN d < 10000 THEN 27 + d / 1000 ELSE 36 + d / 10000 END"
)


def nearest_rank_p95(rows: QuerySet[Any, Any], connection: BaseDatabaseWrapper = default_connection) -> list[Any]:
    """(group, count, failed count, nearest-rank 95th percentile of `d`) for each group of `rows`, a query of rows
    (grp, d, f): one row of group `grp` (never NULL) with the non-negative integer value `d`, `f` 1 if it failed
    else 0.

    The p95 is the smallest `d` whose running count reaches ceil(0.95 n), found in integer arithmetic
    (cum * 20 >= n * 19) in two steps, so no step ranks every row: running sums over each group's counts per
    coarse bucket of `d` (_BUCKET: a few dozen buckets, not every distinct value) find the bucket that holds that
    rank and how many rows lie below it; then running sums over the distinct values of the rows in that one bucket
    find the value. The same SQL on SQLite, which has no percentile aggregate, and PostgreSQL. Raw SQL because
    Django cannot put a window over an aggregate of the same query; the rows are the ORM's own.
    """
    inner, params = rows.query.sql_with_params()
    sql = f"""
        WITH sample AS ({inner}),
        coarse AS (SELECT grp, {_BUCKET} AS b, COUNT(*) AS c, SUM(f) AS f FROM sample GROUP BY 1, 2),
        ranked AS (
            SELECT grp, b, c,
                   SUM(c) OVER (PARTITION BY grp ORDER BY b) AS cum,
                   SUM(c) OVER (PARTITION BY grp) AS n,
                   SUM(f) OVER (PARTITION BY grp) AS n_failed
            FROM coarse
        ),
        target AS (
            SELECT grp, b, cum - c AS below, n, n_failed FROM ranked
            WHERE cum * 20 >= n * 19 AND (cum - c) * 20 < n * 19
        ),
        fine AS (
            SELECT grp, d, COUNT(*) AS c FROM sample WHERE (grp, {_BUCKET}) IN (SELECT grp, b FROM target) GROUP BY 1, 2
        ),
        fine_ranked AS (
            SELECT fine.grp, fine.d, target.n, target.n_failed,
                   target.below + SUM(fine.c) OVER (PARTITION BY fine.grp ORDER BY fine.d) AS cum
            FROM fine JOIN target ON fine.grp = target.grp
        )
        SELECT grp, MAX(n), MAX(n_failed), MIN(d) FROM fine_ranked WHERE cum * 20 >= n * 19 GROUP BY grp
    """  # noqa: S608 (the ORM's SQL, its values bound)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def insert_rows(model: type[Model], fields: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Insert `rows` (values in the order of `fields`, attnames such as `api_key_id`) into `model`'s table: one
    INSERT run by the driver's `executemany`, on the database the router writes `model` to, in the caller's
    transaction. Datetimes are adapted as the ORM adapts them; every other value must be one the driver takes as it
    is (str, int, None), since nothing else is converted.

    For the audit rows of every tool call (mcp/audit.py): `bulk_create` costs about three times as much a row,
    enough for the serving ratio to miss its goal (README, Speed: MCP ÷ bare; docs/decisions/0012-raw-sql.md). No model
    logic runs (no `save()`, no signals, no field defaults): the caller gives every column that has no database default.
    """
    connection = connections[router.db_for_write(model)]
    meta, quote = model._meta, connection.ops.quote_name
    columns = [field for name in fields if isinstance(field := meta.get_field(name), Field)]
    assert len(columns) == len(fields), "only concrete fields have columns"
    adapt = [i for i, field in enumerate(columns) if isinstance(field, DateTimeField)]
    if adapt:
        adapted = [list(row) for row in rows]
        for row in adapted:
            for i in adapt:
                row[i] = connection.ops.adapt_datetimefield_value(row[i])
        rows = adapted
    names = ", ".join(quote(str(field.column)) for field in columns)
    marks = ", ".join(["%s"] * len(columns))
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {quote(meta.db_table)} ({names}) VALUES ({marks})", rows)  # noqa: S608


def insert_unless_present(model: type[Model], values: dict[str, Any], unique: Sequence[str]) -> Any | None:
    """Insert one row of `model` (`values` by attname) unless a row with the same `unique` columns exists: the new
    row's primary key, or None when one was there. One statement, `INSERT … ON CONFLICT (…) DO NOTHING RETURNING`
    (PostgreSQL, and SQLite since 3.35), in the caller's transaction; on PostgreSQL it waits for a transaction
    inserting the same values and then does nothing if that one commits.

    For the idempotency claim of every keyed write (mcpsite/idempotency.py): the ORM's form, an insert in a
    savepoint that catches the IntegrityError, costs two more round trips, enough for bench/bench_idempotency.py's
    keyed ÷ unkeyed to miss its goal (docs/decisions/0012-raw-sql.md). Values are adapted as in `insert_rows`.
    """
    connection = connections[router.db_for_write(model)]
    meta, quote = model._meta, connection.ops.quote_name
    fields = [meta.get_field(name) for name in values]
    params = [
        connection.ops.adapt_datetimefield_value(value) if isinstance(field, DateTimeField) else value
        for field, value in zip(fields, values.values(), strict=True)
    ]
    names = ", ".join(quote(str(field.column)) for field in fields if isinstance(field, Field))
    conflict = ", ".join(quote(str(meta.get_field(name).column)) for name in unique)  # type: ignore[union-attr]
    marks = ", ".join(["%s"] * len(params))
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({names}) VALUES ({marks}) "  # noqa: S608 (names from the model)
        f"ON CONFLICT ({conflict}) DO NOTHING RETURNING {quote(str(meta.pk.column))}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return row[0] if row is not None else None
