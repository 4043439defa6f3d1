"""Rate limits: at most N admitted in any period (a sliding window log), exact under concurrency, with the wait.

Time is the limiter's injectable clock (`rate_clock`): no test sleeps into a fresh window.
"""

from __future__ import annotations

import contextlib
import threading
import zlib

import pytest

from mcpsite.core import limits
from mcpsite.core.limits import DatabaseStore, over_limit
from mcpsite.tests.concurrency import run_together

pytestmark = pytest.mark.django_db

T0 = 1_800_000_000.0  # the rate_clock fixture's start


def at_most_in_any_window(times: list[float], period: float) -> int:
    """The largest number of `times` in any half-open window [t, t + period)."""
    times = sorted(times)
    return max((sum(1 for u in times if t <= u < t + period) for t in times), default=0)


def test_hits_past_the_rate_are_limited_exactly(rate_clock):
    hits = [over_limit(group="t", key="exact", rate="10/m") for _ in range(12)]
    assert hits == [False] * 10 + [True] * 2


def test_200_calls_spread_over_51_seconds_admit_at_most_100_in_any_minute(rate_clock):
    admitted = []
    for i in range(200):
        rate_clock.now = T0 + i * 51 / 199
        if not over_limit(group="t", key="spread", rate="100/m"):
            admitted.append(rate_clock.now)
    assert len(admitted) == 100
    assert at_most_in_any_window(admitted, 60) == 100
    # A minute after the first admission, its slot is free again (and only its).
    rate_clock.now = admitted[0] + 60
    assert not over_limit(group="t", key="spread", rate="100/m")
    assert over_limit(group="t", key="spread", rate="100/m")


def test_control_the_fixed_window_it_replaces_admits_the_rate_twice_in_a_minute():
    """django-ratelimit's windows (the key's boundary offset by a CRC of it) under the same 200 calls: a
    burst that straddles a boundary is counted in two windows."""
    period, limit = 60, 100
    offset = zlib.crc32(b"spread") % period
    counts: dict[int, int] = {}
    admitted = []
    start = T0 - ((T0 + offset) % period) + period - 25  # the calls straddle a window boundary
    for i in range(200):
        now = start + i * 51 / 199
        window = int((now + offset) // period)
        counts[window] = counts.get(window, 0) + 1
        if counts[window] <= limit:
            admitted.append(now)
    assert at_most_in_any_window(admitted, 60) > 100


def test_retry_after_is_the_wait_until_the_oldest_admission_leaves_the_window(rate_clock, make_api_key):
    key, _raw = make_api_key(rate="3/m")
    for _ in range(3):
        limits.enforce_api_key_rate(key)
        rate_clock.now += 5
    assert limits.api_key_retry_after(key) == 45  # the first admission, at T0, leaves at T0 + 60; now is T0 + 15
    with pytest.raises(limits.RateLimited):
        limits.enforce_api_key_rate(key)
    rate_clock.now = T0 + 59.2
    assert limits.api_key_retry_after(key) == 1  # whole seconds, rounded up
    rate_clock.now = T0 + 60
    assert limits.api_key_retry_after(key) is None
    limits.enforce_api_key_rate(key)
    assert limits.api_key_retry_after(key) == 5  # the next oldest, at T0 + 5


def test_a_given_back_call_frees_its_slot(rate_clock):
    throttle = {"group": "t", "key": "give", "rate": "2/15m"}
    assert not over_limit(**throttle)
    assert not over_limit(**throttle)
    limits.give_back(**throttle)
    assert not over_limit(**throttle)
    assert over_limit(**throttle)


def test_a_changed_rate_counts_in_a_window_of_its_own(rate_clock):
    assert [over_limit(group="t", key="k", rate="2/m") for _ in range(3)] == [False, False, True]
    assert not over_limit(group="t", key="k", rate="3/m")


@pytest.mark.parametrize("rate", ["", "100", "0/m", "x/m", "10/w", "-1/m"])
def test_a_malformed_rate_is_refused_clearly(rate):
    with pytest.raises(ValueError, match="Not a rate"):
        limits.parse_rate(rate)


@pytest.mark.parametrize(("rate", "parsed"), [("100/m", (100, 60)), ("5/15m", (5, 900)), ("1/h", (1, 3600))])
def test_rates_are_read_as_django_ratelimit_wrote_them(rate, parsed):
    assert limits.parse_rate(rate) == parsed


def test_pruning_deletes_only_windows_whose_every_slot_is_free(rate_clock):
    from mcpsite.models import RateSlot, RateWindow

    over_limit(group="t", key="old", rate="5/m")
    rate_clock.now += 61
    over_limit(group="t", key="live", rate="5/m")
    assert limits.rate_windows_prune() == 1
    assert set(RateWindow.objects.values_list("bucket", flat=True)) == {"t:5/60:live"}
    assert set(RateSlot.objects.values_list("bucket", flat=True)) == {"t:5/60:live"}


# --- across processes: concurrent takes on PostgreSQL ---------------------------------------------------------

THREADS, TAKES, LIMIT = 8, 15, 50


def concurrent_admissions(store_factory, monkeypatch) -> int:
    monkeypatch.setattr(limits.limiter, "store", store_factory)

    def take(_n: int) -> int:
        return sum(not over_limit(group="t", key="race", rate=f"{LIMIT}/m") for _ in range(TAKES))

    admitted, errors = run_together(take, THREADS)
    assert errors == []
    return sum(admitted)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_takes_admit_exactly_the_rate(monkeypatch):
    assert concurrent_admissions(limits.PostgresStore, monkeypatch) == LIMIT


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_transaction_path_with_its_row_lock_is_exact_too(monkeypatch):
    assert concurrent_admissions(DatabaseStore, monkeypatch) == LIMIT


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_control_without_the_row_lock_concurrent_takes_miscount(monkeypatch):
    first_reads = threading.Barrier(THREADS)

    class Unlocked(DatabaseStore):
        lock_rows = False

        def _position(self, *args, **kwargs):
            position = super()._position(*args, **kwargs)
            if not first_reads.broken:
                # Every thread's first read is made before any write, as a busy server may interleave them.
                with contextlib.suppress(threading.BrokenBarrierError):
                    first_reads.wait(timeout=10)
                first_reads.abort()
            return position

    assert not over_limit(group="t", key="race", rate=f"{LIMIT}/m")  # the window exists before the threads start
    # Racing takes write the same slot (more admitted than the rate) or move the ring back onto fresh slots (fewer).
    assert 1 + concurrent_admissions(Unlocked, monkeypatch) != LIMIT


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_take_is_one_statement_that_commits_without_waiting_for_the_flush():
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        assert not over_limit(group="t", key="one", rate="10/m")
        with connection.cursor() as cursor:  # still in the transaction the take ran in
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "off"
    assert len(queries.captured_queries) == 2  # the take and the SHOW


def test_the_prune_command_deletes_spent_windows(rate_clock):
    from io import StringIO

    from django.core.management import call_command

    over_limit(group="t", key="old", rate="5/m")
    rate_clock.now += 61
    out = StringIO()
    call_command("prune_rate_windows", stdout=out)
    assert "Deleted 1 " in out.getvalue()


def _on_sqlite() -> bool:
    from django.db import connection

    from mcpsite.core.db import has_one_writer

    return has_one_writer(connection)


@pytest.mark.skipif("not _on_sqlite()", reason="SQLite's take (SqliteStore)")
def test_on_sqlite_an_admitted_take_is_one_statement_and_a_refused_one_decides_in_a_transaction(rate_clock):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from mcpsite.models import RateSlot, RateWindow

    assert isinstance(limits._store(), limits.SqliteStore)
    assert not over_limit(group="t", key="one", rate="2/m")  # makes the window (the transaction path)
    with CaptureQueriesContext(connection) as queries:
        assert not over_limit(group="t", key="one", rate="2/m")
    assert len(queries.captured_queries) == 1  # the UPDATE; its trigger wrote the slot
    assert list(RateSlot.objects.filter(bucket="t:2/60:one").order_by("slot").values_list("slot", "at")) == [
        (0, T0),
        (1, T0),
    ]
    with CaptureQueriesContext(connection) as queries:
        assert over_limit(group="t", key="one", rate="2/m")
    assert len(queries.captured_queries) > 1  # refused: the transaction path read the wait
    rate_clock.now += 60
    assert not over_limit(group="t", key="one", rate="2/m")  # the oldest slot left the window: the UPDATE admits
    assert RateWindow.objects.get(bucket="t:2/60:one").next_slot == 1
    assert RateSlot.objects.get(bucket="t:2/60:one", slot=0).at == T0 + 60
