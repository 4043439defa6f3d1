"""No double booking under real concurrency (PostgreSQL), and a control that shows the race exists.

Threads are released together by a barrier; each books through the real service on its own
database connection and closes it at the end.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from django.db import connection

from cinema import services
from cinema.models import Reservation, ReservedSeat
from cinema.tests.conftest import make_movie, make_schedule, make_theater
from mcpsite.core import limits
from mcpsite.core.errors import ApplicationError, Conflict
from mcpsite.mcp.wire import jsonrpc_code
from mcpsite.tests.concurrency import run_together

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ATTEMPTS = 50


def _show():
    import datetime

    from django.utils import timezone

    theater = make_theater("シアター競合", rows=1, columns=10)
    return make_schedule(make_movie(), theater, timezone.localdate() + datetime.timedelta(days=1), "18:00")


def _seats_for(attempt: int) -> list[str]:
    # Every attempt wants two neighbouring seats of one 10-seat row: heavy overlap.
    first = attempt % 9 + 1
    return [f"A{first}", f"A{first + 1}"]


def _run_together(schedule_id: str, seats_for, attempts: int = ATTEMPTS) -> dict:
    def attempt(n: int) -> tuple[str, object]:
        try:
            booking = services.reservation_create(schedule_id=schedule_id, seats=seats_for(n), password=f"pw-{n:06d}")
        except Conflict as exc:
            return "conflict", exc.data["conflicted_seats"]
        return "ok", booking.reservation.public_id

    results, errors = run_together(attempt, attempts)
    outcome = {"ok": [], "conflict": [], "error": [repr(exc) for exc in errors]}  # an error is a bug to show
    for kind, value in results:
        outcome[kind].append(value)
    return outcome


def _active_sales_per_seat(schedule) -> Counter:
    return Counter(ReservedSeat.objects.filter(schedule=schedule, active=True).values_list("seat__label", flat=True))


def test_fifty_overlapping_bookings_sell_every_seat_at_most_once():
    schedule = _show()
    outcome = _run_together(schedule.public_id, _seats_for)
    assert outcome["error"] == []
    assert len(outcome["ok"]) + len(outcome["conflict"]) == ATTEMPTS
    assert len(outcome["ok"]) >= 1
    sales = _active_sales_per_seat(schedule)
    assert max(sales.values()) == 1
    assert sum(sales.values()) == 2 * len(outcome["ok"])  # all or nothing: two seats per success
    assert Reservation.objects.count() == len(outcome["ok"])
    # Reservation ids stay unique and gapless under concurrency.
    numbers = sorted(int(rid[-3:]) for rid in outcome["ok"])
    assert numbers == list(range(1, len(numbers) + 1))


def test_concurrent_bookings_of_different_seats_all_succeed_with_unique_ids():
    schedule = _show()
    outcome = _run_together(schedule.public_id, lambda n: [f"A{n + 1}"], attempts=10)
    assert outcome["error"] == [] and outcome["conflict"] == []
    assert len(set(outcome["ok"])) == 10


def test_control_without_the_constraint_the_race_double_sells(monkeypatch):
    """Drop the partial unique index: overlapping bookings then oversell.

    This proves the two tests above are not passing by luck: the race is real, and the index (there is no
    show lock) is what stops it.
    """
    schedule = _show()
    real_taken = services._taken_labels

    def slow_check(**kwargs):
        taken = real_taken(**kwargs)
        time.sleep(0.05)  # widen the check-then-insert window as a busy server would
        return taken

    monkeypatch.setattr(services, "_taken_labels", slow_check)
    # Hashed on PASSWORD_HASH_THREADS threads, the bookings would reach their checks a hash apart; a stand-in hash
    # lets them all reach the check-then-insert window together, as a server with more cores would.
    monkeypatch.setattr(services, "password_hash", lambda password: "argon2$stand-in")
    constraint = next(c for c in ReservedSeat._meta.constraints if c.name == "cinema_one_active_booking_per_seat")
    with connection.schema_editor() as editor:
        editor.remove_constraint(ReservedSeat, constraint)
    try:
        outcome = _run_together(schedule.public_id, _seats_for)
        sales = _active_sales_per_seat(schedule)
        assert outcome["error"] == []
        assert max(sales.values()) > 1, "without the lock and the index a seat is sold twice"
    finally:
        ReservedSeat.objects.all().delete()
        with connection.schema_editor() as editor:
            editor.add_constraint(ReservedSeat, constraint)


def test_a_booking_takes_no_lock_on_the_show():
    """Bookings of one show wait only on the day's counter, not on a show lock held through extra round trips.

    Another transaction holds the show's row lock (FOR NO KEY UPDATE, as an edit of the show would: it still lets
    the reservation's foreign-key check through); the booking must not wait for it (lock_timeout turns a wait
    into an error instead of a hang).
    """
    import threading

    from django.db import connections, transaction

    from cinema.models import Schedule

    schedule = _show()
    locked, release = threading.Event(), threading.Event()

    def hold_the_show():
        try:
            with transaction.atomic():
                Schedule.objects.select_for_update(no_key=True).get(pk=schedule.pk)
                locked.set()
                release.wait(30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_show)
    holder.start()
    try:
        assert locked.wait(30)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '3s'")
        booking = services.reservation_create(schedule_id=schedule.public_id, seats=["A1"], password="pw-123456")
        assert booking.seat_labels == ["A1"]
    finally:
        release.set()
        holder.join()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")


# --- wrong reservation passwords: counted before hashing ----------------------------------------------

GUESSES = 40


def _guess_all_at_once(reservation_id: str) -> Counter:
    def guess(n: int) -> int:
        try:
            services.reservation_authenticate(reservation_id=reservation_id, password=f"guess-{n:04d}")
        except ApplicationError as exc:
            return jsonrpc_code(exc)
        return 200

    results, errors = run_together(guess, GUESSES)
    assert errors == []
    return Counter(results)


def _booked_reservation() -> str:
    booking = services.reservation_create(schedule_id=_show().public_id, seats=["A1"], password="right-password")
    reservation_id = booking.reservation.public_id
    return reservation_id


def test_concurrent_wrong_guesses_get_only_the_allowed_checks(monkeypatch, settings, make_api_key):
    """Issue #17: 80 concurrent wrong guesses got 14 real checks against a limit of 5 (check, then count)."""
    settings.CINEMA_PASSWORD_RATE = "5/15m"
    reservation_id = _booked_reservation()
    checks, real_check = [], services.password_check

    def counted_check(password, encoded):
        checks.append(password)
        return real_check(password, encoded)

    monkeypatch.setattr(services, "password_check", counted_check)
    outcome = _guess_all_at_once(reservation_id)
    assert len(checks) == 5
    assert outcome == {403: 5, 429: GUESSES - 5}
    owner_key, _raw = make_api_key(name="owner")  # the guesses came from another caller: the owner gets in
    right = services.reservation_authenticate(
        reservation_id=reservation_id, password="right-password", api_key=owner_key
    )
    assert right.public_id == reservation_id


def test_control_counting_after_the_check_lets_more_guesses_through(monkeypatch, settings):
    """The old order (read the count, hash, count a wrong one) under the same burst: more than 5 are checked.

    Hashing is simulated by a sleep here (the guesses are wrong anyway): 40 concurrent argon2 hashes would take
    760 MB on a shared machine.
    """
    settings.CINEMA_PASSWORD_RATE = "5/15m"
    reservation_id = _booked_reservation()
    throttle = services._password_throttle(reservation_id=reservation_id, api_key=None)
    checks = []

    def check_then_count(throttle):
        return limits.retry_after(**throttle) is None

    def slow_wrong_check(password, encoded):
        checks.append(password)
        time.sleep(0.05)
        limits.over_limit(**throttle)  # counted only after the wrong password was found
        return False

    monkeypatch.setattr(services, "_take_attempt", check_then_count)
    monkeypatch.setattr(services, "password_check", slow_wrong_check)
    _guess_all_at_once(reservation_id)
    assert len(checks) > 5, "checking before counting lets concurrent guesses past the limit"


# --- a seat blocked for a show and booked at once ------------------------------------------------------------------

ROUNDS = 5


def _block_and_book_at_once(monkeypatch, *, slow: str, ordered: bool = False) -> list[tuple[bool, bool]]:
    """Each round, one thread blocks seat A<n> for the show while another books it, released together; `slow` is
    the side that waits 0.1 s between its last check and its write (as a busy server would). `ordered`: the other
    side checks only once the slow side has checked (up to 1 s), so the race's window is met however late a thread
    starts on a loaded machine. Whether the seat ended up blocked and whether it ended up sold, per round."""
    from django.utils import timezone as tz

    from cinema.models import ShowSeatBlock

    schedule = _show()
    monkeypatch.setattr(services, "password_hash", lambda password: "argon2$stand-in")
    checked = threading.Event()

    def slowly(func, side):
        def called(**kwargs):
            if side != slow and ordered:
                checked.wait(timeout=1)
            result = func(**kwargs)
            if side == slow:
                checked.set()
                time.sleep(0.1)
            return result

        return called

    monkeypatch.setattr(services, "_seats_for_booking", slowly(services._seats_for_booking, "booking"))
    monkeypatch.setattr(services, "show_seat_blocks_validate", slowly(services.show_seat_blocks_validate, "block"))
    outcomes = []
    for n in range(1, ROUNDS + 1):
        label = f"A{n}"

        def attempt(i: int, label=label) -> str:
            try:
                if i == 0:
                    services.show_seat_blocks_set(schedule=schedule, seats=[label], now=tz.now())
                else:
                    services.reservation_create(schedule_id=schedule.public_id, seats=[label], password="pw-123456")
            except ApplicationError as exc:
                return f"refused: {exc.human}"
            return "done"

        checked.clear()
        results, errors = run_together(attempt, 2)
        assert errors == [], errors
        blocked = ShowSeatBlock.objects.filter(schedule=schedule, seat__label=label).exists()
        sold = ReservedSeat.objects.filter(schedule=schedule, seat__label=label, active=True).exists()
        outcomes.append((blocked, sold))
    return outcomes


@pytest.mark.parametrize("slow", ["booking", "block"])
def test_a_seat_is_never_both_blocked_for_a_show_and_sold(monkeypatch, slow):
    outcomes = _block_and_book_at_once(monkeypatch, slow=slow)
    assert all(blocked != sold for blocked, sold in outcomes), outcomes  # exactly one of the two won each round


@pytest.mark.parametrize("slow", ["booking", "block"])
def test_control_without_the_show_lock_and_the_triggers_a_blocked_seat_is_sold(monkeypatch, slow):
    """No lock on the show and no trigger (migration 0006): the block and the booking both get in."""
    from cinema.models import Schedule

    monkeypatch.setattr(
        services, "_show_lock", lambda schedule: Schedule.objects.select_related("theater").get(pk=schedule.pk)
    )
    triggers = [
        ("cinema_showseatblock", "cinema_show_seat_block_valid_insert"),
        ("cinema_reservedseat", "cinema_reserved_seat_not_blocked_insert"),
    ]
    with connection.cursor() as cursor:
        for table, name in triggers:
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {name}")
    try:
        outcomes = _block_and_book_at_once(monkeypatch, slow=slow, ordered=True)
    finally:
        with connection.cursor() as cursor:
            for table, name in triggers:
                cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER {name}")
    assert (True, True) in outcomes, outcomes
