"""The rate-limit counter's increment is atomic across concurrent clients (PostgreSQL).

Control: Django's own DatabaseCache (read, then write) loses increments under the same load,
which is why django-ratelimit refuses it and why mcpsite ships AtomicDatabaseCache.
"""

import pytest
from django.core.cache.backends.db import DatabaseCache

from mcpsite.cache import AtomicDatabaseCache
from mcpsite.tests.concurrency import run_together

THREADS, HITS = 8, 15


def hammer(cache_class) -> int:
    cache = cache_class("mcpsite_cache", {})
    cache.set("counter", 0, 300)

    def increment(_n):
        for _ in range(HITS):
            cache.incr("counter")

    _done, errors = run_together(increment, THREADS)
    assert errors == []
    return cache.get("counter")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_atomic_database_cache_counts_every_increment():
    assert hammer(AtomicDatabaseCache) == THREADS * HITS


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_control_plain_database_cache_loses_increments():
    assert hammer(DatabaseCache) < THREADS * HITS


@pytest.mark.postgres
@pytest.mark.django_db
def test_an_increment_is_two_statements_and_commits_without_waiting_for_the_flush():
    """The locking SELECT also turns synchronous_commit off for its transaction (a SET LOCAL of its own was one
    more round trip on every call's path, bench_cinema_booking)."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    cache = AtomicDatabaseCache("mcpsite_cache", {})
    cache.set("counter", 0, 300)
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        assert cache.incr("counter") == 1
        with connection.cursor() as cursor:  # still in the transaction the increment ran in
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "off"
    statements = [q["sql"].split()[0].upper() for q in queries.captured_queries]
    assert [s for s in statements if s not in {"SAVEPOINT", "RELEASE"}][:2] == ["SELECT", "UPDATE"]
