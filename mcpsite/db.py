"""Database helpers shared by the platform's write paths."""

from django.db import connection as default_connection


def commit_without_flush_wait(connection=default_connection) -> None:
    """Let this transaction's COMMIT return before PostgreSQL flushes its WAL (`synchronous_commit = off`).

    For the bookkeeping of every call (audit rows; the rate limiter's stored function does the same): the flush
    (fsync) was the largest cost of a read-only MCP call. The commit is still atomic and visible at once to every
    process; what a crash of the database server (not of a site process) can lose is the last 3 x wal_writer_delay
    (600 ms by default) of such commits. SQLite in WAL mode with synchronous=NORMAL (settings.py) already commits
    without a flush. Call it first inside `transaction.atomic()`.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
