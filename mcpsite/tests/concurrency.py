"""Threads released together, for the PostgreSQL concurrency tests of every app."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from django.db import connection, transaction

from mcpsite.core.db import has_one_writer


def run_together(
    target: Callable[[int], Any], n: int, *, timeout: float = 120
) -> tuple[list[Any], list[BaseException]]:
    """Call target(0) … target(n-1) in n threads released at once by a barrier.

    Returns what the calls returned (in completion order) and what they raised; each thread closes
    its own database connection.
    """
    barrier = threading.Barrier(n)
    lock = threading.Lock()
    results: list[Any] = []
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            barrier.wait(timeout=timeout)
            value = target(i)
            with lock:
                results.append(value)
        except BaseException as exc:  # noqa: BLE001 - handed to the test, which asserts on it
            with lock:
                errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return results, errors


def needs_concurrent_writers() -> None:
    """Skip a test whose threads write at once on SQLite's default in-memory test database (shared cache: a second
    writer fails at once with "database table is locked" instead of waiting). PostgreSQL and a SQLite file
    (`SQLITE_TEST_NAME=/tmp/test.sqlite3`, WAL and IMMEDIATE transactions as in production) run it."""
    import pytest

    if has_one_writer(connection) and connection.is_in_memory_db():
        pytest.skip("concurrent writers need PostgreSQL or a SQLite file test database (SQLITE_TEST_NAME)")


@contextlib.contextmanager
def held_in_another_transaction(take: Callable[[], Any], *, timeout: float = 30) -> Iterator[None]:
    """Run `take()` (which locks rows or a table) in a transaction of another thread, and hold its locks until the
    block ends: the interleaving a concurrency test needs, in that order, every time."""
    locked, release = threading.Barrier(2), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                take()
                locked.wait(timeout=timeout)
                release.wait(timeout=timeout)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    locked.wait(timeout=timeout)
    try:
        yield
    finally:
        release.set()
        holder.join(timeout=timeout)
