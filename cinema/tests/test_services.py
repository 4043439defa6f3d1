"""Booking is all or nothing; passwords exist only as argon2 hashes; cancellations are recorded."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.hashers import identify_hasher

from cinema import services
from cinema.models import Reservation, ReservationDayCounter, ReservedSeat, Seat, reservation_number
from mcpsite.core.db import has_stored_functions
from mcpsite.core.errors import Conflict, Forbidden, InvalidParams
from mcpsite.mcp.wire import as_jsonrpc
from mcpsite.models import ToolCall

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery"


def _book(schedule_id="s001", seats=("A1", "A2", "A3"), password=PASSWORD):
    return services.reservation_create(schedule_id=schedule_id, seats=list(seats), password=password)


def test_a_crash_after_the_first_insert_books_nothing(seed_world, monkeypatch):
    """Simulates the process dying mid-transaction: the first seat row is written, then an exception."""
    from django.db import connection

    if has_stored_functions(connection):
        pytest.skip("PostgreSQL writes a booking in one statement: test_a_seat_insert_refused_mid_statement_…")
    real_bulk_create = ReservedSeat.objects.bulk_create

    def first_then_die(objs, *args, **kwargs):
        real_bulk_create(objs[:1], *args, **kwargs)
        assert ReservedSeat.objects.count() == 1  # the first insert really happened
        raise RuntimeError("process killed")

    monkeypatch.setattr(ReservedSeat.objects, "bulk_create", first_then_die)
    with pytest.raises(RuntimeError):
        _book()
    assert Reservation.objects.count() == 0
    assert ReservedSeat.objects.count() == 0
    assert not ReservationDayCounter.objects.filter(last__gt=0).exists()


@pytest.mark.postgres
def test_a_seat_insert_refused_mid_statement_books_nothing(seed_world, monkeypatch):
    """PostgreSQL's one-statement write: the counter, the reservation and its first seats are written, then the
    last seat's insert is refused (the first seat again); nothing of the booking stays."""
    from django.db import IntegrityError

    real_insert = services._reservation_insert_postgresql

    def with_a_bad_last_seat(*, seat_ids, **kwargs):
        return real_insert(seat_ids=[*seat_ids, seat_ids[0]], **kwargs)

    monkeypatch.setattr(services, "_reservation_insert_postgresql", with_a_bad_last_seat)
    with pytest.raises(IntegrityError):
        _book()
    assert Reservation.objects.count() == 0
    assert ReservedSeat.objects.count() == 0
    assert not ReservationDayCounter.objects.filter(last__gt=0).exists()


def test_the_unique_index_backs_up_the_check(seed_world, monkeypatch):
    """With the Python check switched off, the database still refuses the seat and we answer 409."""
    _book(seats=["A2"])
    monkeypatch.setattr(services, "_taken_labels", _taken_only_after_failure())
    with pytest.raises(Conflict) as info:
        _book()
    assert info.value.data["conflicted_seats"] == ["A2"]
    assert ReservedSeat.objects.count() == 1
    assert Reservation.objects.count() == 1


def _taken_only_after_failure():
    real = services._taken_labels
    calls = {"n": 0}

    def taken(**kwargs):
        calls["n"] += 1
        return [] if calls["n"] <= 2 else real(**kwargs)  # the checks before and after the hash see nothing

    return taken


def test_a_seat_sold_while_the_password_is_hashed_is_a_conflict_before_any_write(seed_world, monkeypatch):
    """Another booking takes the seat during our argon2 hash: the read after the hash sees it and answers 409,
    without an INSERT (the unique index is the backstop, not the usual path)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    real_password_hash = services.password_hash
    rival = {"done": False}

    def hash_while_a_rival_books(password):
        if not rival["done"]:
            rival["done"] = True
            _book(seats=["A2"], password="rival-password")
            rival["queries"] = len(queries.captured_queries)
        return real_password_hash(password)

    monkeypatch.setattr(services, "password_hash", hash_while_a_rival_books)
    with CaptureQueriesContext(connection) as queries, pytest.raises(Conflict) as info:
        _book(seats=["A1", "A2"])
    assert info.value.data["conflicted_seats"] == ["A2"]
    ours = [q["sql"] for q in queries.captured_queries[rival["queries"] :]]
    assert ours and not [sql for sql in ours if "INSERT" in sql or "UPDATE" in sql]
    assert list(ReservedSeat.objects.values_list("seat__label", flat=True)) == ["A2"]


def test_password_is_stored_as_argon2id_only(seed_world):
    booking = _book()
    stored = Reservation.objects.get(pk=booking.reservation.pk).password_hash
    assert identify_hasher(stored).algorithm == "argon2"
    assert stored.startswith("argon2$argon2id$")
    assert PASSWORD not in stored


def test_passwords_never_reach_logs_audit_or_errors(seed_world, call_tool, caplog):
    caplog.set_level(logging.DEBUG)
    call_tool("reserve_seats", {"schedule_id": "s001", "seats": ["A1"], "reservation_password": PASSWORD})
    with pytest.raises(Conflict) as conflict:
        call_tool("reserve_seats", {"schedule_id": "s001", "seats": ["A1"], "reservation_password": PASSWORD})
    errors = [conflict.value]
    for wrong, refused in ((PASSWORD + "x", Forbidden), ("short", Forbidden)):
        with pytest.raises(refused) as info:
            call_tool("get_reservation_details", {"reservation_id": "r20260220001", "reservation_password": wrong})
        errors.append(info.value)
    call_tool("cancel_reservation", {"reservation_id": "r20260220001", "reservation_password": PASSWORD})
    with pytest.raises(InvalidParams) as bad:
        call_tool("reserve_seats", {"schedule_id": "s001", "seats": ["A1"], "reservation_password": "abc"})
    errors.append(bad.value)

    assert "Reservation r20260220001" in caplog.text  # the service did log
    for secret in (PASSWORD, "short", "abc"):
        assert secret not in caplog.text
        for error in errors:
            assert secret not in str(as_jsonrpc(error))
    audit = list(ToolCall.objects.values())
    assert len(audit) == 6
    assert PASSWORD not in str(audit)


def test_staff_cancellation_is_recorded_and_allowed_after_the_start(seed_world, freeze_now, admin_user):
    from cinema.tests.conftest import SEED_MORNING

    booking = _book()
    freeze_now(SEED_MORNING.replace(hour=11))
    reservation = services.reservation_cancel(
        reservation=booking.reservation, source=Reservation.Source.STAFF, actor=admin_user
    )
    reservation.refresh_from_db()
    assert (reservation.status, reservation.cancel_source, reservation.cancelled_by) == (
        "cancelled",
        "staff",
        admin_user,
    )
    assert not ReservedSeat.objects.filter(active=True).exists()
    with pytest.raises(Conflict, match="Already cancelled"):
        services.reservation_cancel(reservation=reservation, source=Reservation.Source.STAFF, actor=admin_user)


def test_layout_builder_resizes_and_blocks(seed_world):
    theater = seed_world["t02"]
    services.theater_set_layout(theater=theater, rows=3, columns=4, blocked={"B2", "C4"})
    labels = set(Seat.objects.filter(theater=theater).values_list("label", flat=True))
    assert len(labels) == 12 and "D1" not in labels and "A5" not in labels
    assert set(Seat.objects.filter(theater=theater, blocked=True).values_list("label", flat=True)) == {"B2", "C4"}
    services.theater_set_layout(theater=theater, rows=3, columns=4, blocked=set())
    assert not Seat.objects.filter(theater=theater, blocked=True).exists()
    with pytest.raises(InvalidParams) as refused:
        services.theater_set_layout(theater=theater, rows=3, columns=4, blocked={"Z9"})
    assert "outside the layout" in refused.value.detail


def test_layout_cannot_drop_sold_seats(seed_world):
    _book(schedule_id="s002", seats=["J10"])
    with pytest.raises(InvalidParams) as refused:
        services.theater_set_layout(theater=seed_world["t02"], rows=5, columns=5)
    assert "hold reservations" in refused.value.detail
    assert Seat.objects.filter(theater=seed_world["t02"]).count() == 100


def test_reservation_numbers_count_on_past_999_in_the_days_format(seed_world):
    """Both ways of numbering (PostgreSQL's stored function inside the INSERT, SQLite's upsert) give r<day>001…
    and keep every digit past 999."""
    from django.utils import timezone

    day = timezone.localdate()
    first = _book(seats=("A1",)).reservation.public_id
    assert first == reservation_number(day, 1) == f"r{day:%Y%m%d}001"
    ReservationDayCounter.objects.filter(day=day).update(last=999)
    booking = _book(seats=("A2",))
    assert booking.reservation.public_id == reservation_number(day, 1000) == f"r{day:%Y%m%d}1000"
    assert Reservation.objects.get(pk=booking.reservation.pk).public_id == booking.reservation.public_id


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.parametrize("last", [0, 8, 998, 999, 12344])
def test_the_stored_function_numbers_as_reservation_number(last):
    """Migration 0003's `cinema_reservation_id_next` writes the format of `models.reservation_number` in SQL (the
    migration is frozen, so it keeps its own copy): the two agree, past 999 too."""
    import datetime

    from django.db import connection

    day = datetime.date(2026, 2, 20)
    ReservationDayCounter.objects.create(day=day, last=last)
    with connection.cursor() as cursor:
        cursor.execute("SELECT cinema_reservation_id_next(%s)", [day])
        assert cursor.fetchone()[0] == reservation_number(day, last + 1)


@pytest.mark.postgres
def test_on_postgresql_a_booking_is_written_by_one_statement(seed_world):
    """The section every booking of a day waits for runs from the day's counter lock to COMMIT. On PostgreSQL the
    counter, the reservation and its seats are one statement in its own transaction (the counter incremented
    inside the reservation's INSERT), so that section is one round trip (bench_cinema_booking)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        _book(seats=("A1", "A2"))
    statements = [q["sql"] for q in queries.captured_queries]
    writes = [sql for sql in statements if "INSERT" in sql or "UPDATE" in sql or "DELETE" in sql]
    assert len(writes) == 1
    assert 'INSERT INTO "cinema_reservation"' in writes[0] and 'INSERT INTO "cinema_reservedseat"' in writes[0]
    assert "cinema_reservation_id_next" in writes[0]
    assert not any("cinema_reservationdaycounter" in sql for sql in statements)
    assert sorted(ReservedSeat.objects.values_list("seat__label", flat=True)) == ["A1", "A2"]


def test_a_bookings_reads_ask_for_no_ordering(seed_world):
    """The reads every booking makes (the show; its seats, with whether they are sold, before and after the hash)
    sort nothing and join nothing they do not use: Seat's default ordering joined the theater (bench_cinema_booking's
    profile)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        _book(seats=("A1", "A2"))
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith("SELECT")]
    assert reads
    assert not [sql for sql in reads if "ORDER BY" in sql]
    assert not [sql for sql in reads if 'FROM "cinema_seat"' in sql and "JOIN" in sql]
