"""The rate-limit counter's increment is atomic across concurrent clients (PostgreSQL).

Control: Django's own DatabaseCache (read, then write) loses increments under the same load,
which is why django-ratelimit refuses it and why mcpsite ships AtomicDatabaseCache.
"""

import base64
import pickle

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
@pytest.mark.django_db(transaction=True)
def test_increments_of_a_value_the_stored_function_does_not_read_are_counted_too():
    """A counter past 32 bits is a pickle mcpsite_cache_incr leaves alone: the transaction path counts it."""
    cache = AtomicDatabaseCache("mcpsite_cache", {})
    cache.set("counter", 2**40, 300)

    def increment(_n):
        for _ in range(HITS):
            cache.incr("counter")

    _done, errors = run_together(increment, THREADS)
    assert errors == []
    assert cache.get("counter") == 2**40 + THREADS * HITS


@pytest.mark.postgres
@pytest.mark.django_db
def test_an_increment_is_one_statement_and_commits_without_waiting_for_the_flush():
    """The stored function of migration 0007 also turns synchronous_commit off for its transaction (the locking
    SELECT and UPDATE in a transaction were four round trips on every call's path, bench_cinema_booking)."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    cache = AtomicDatabaseCache("mcpsite_cache", {})
    cache.set("counter", 0, 300)
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        assert cache.incr("counter") == 1
        with connection.cursor() as cursor:  # still in the transaction the increment ran in
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "off"
    assert [q["sql"].split()[1] for q in queries.captured_queries][:1] == ["mcpsite_cache_incr('mcpsite_cache',"]
    assert len(queries.captured_queries) == 2  # the increment and the SHOW


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_the_stored_function_reads_and_writes_integer_pickles_as_python_does(protocol):
    from django.db import connection

    values = [0, 1, 41, 255, 256, 65535, 65536, 2**31 - 1, -1, -300, -(2**31)]
    with connection.cursor() as cursor:
        for value in values:
            stored = base64.b64encode(pickle.dumps(value, protocol)).decode()
            cursor.execute("SELECT mcpsite_pickled_int(%s)", [stored])
            assert cursor.fetchone()[0] == value, (value, protocol)
        for other in (2**40, True, False, 1.5, "7", None, [1]):
            cursor.execute("SELECT mcpsite_pickled_int(%s)", [base64.b64encode(pickle.dumps(other, protocol)).decode()])
            assert cursor.fetchone()[0] is None, (other, protocol)
    cache = AtomicDatabaseCache("mcpsite_cache", {})
    for value in (0, 255, 65535, 2**31 - 1, -5):
        cache.set("counter", value, 300)
        assert cache.incr("counter") == value + 1
        assert cache.get("counter") == value + 1
        assert cache.incr("counter", 10) == value + 11
        assert cache.decr("counter", 11) == value
    cache.set("flag", True, 300)
    assert cache.incr("flag") == 2  # Python's path: True + 1
    with pytest.raises(ValueError):
        cache.incr("missing")
