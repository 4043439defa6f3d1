"""cinema's SQL below the ORM (docs/decisions/0012-raw-sql.md): the booking path.

Kept because bench/bench_cinema_booking.py misses its goal without it (README, Speed: bookings/s over `/rpc` ÷ the
argon2 rate, goal ≥ 0.85): the equivalent ORM queries (the show; the seats; their bookings; twice for the seats)
cost more to compile than to run, and on PostgreSQL the counter, the reservation and its seats are one statement
inside the section every booking of a day waits for. Tested on SQLite and PostgreSQL (cinema/tests/test_services.py,
test_concurrency.py). Each function returns rows; the services build the objects.
"""

from __future__ import annotations

import datetime
from typing import Any

from django.db import connection

from .models import Reservation, ReservationDayCounter, ReservedSeat, Schedule, Seat, ShowSeatBlock, Theater


def _sold(show: str) -> str:
    """Whether the show `show` (a column or a placeholder) has sold the seat `s`."""
    sold = connection.ops.quote_name(ReservedSeat._meta.db_table)
    return f"EXISTS (SELECT 1 FROM {sold} r WHERE r.schedule_id = {show} AND r.seat_id = s.id AND r.active)"


def _blocked(show: str) -> str:
    """Whether the seat `s` is not for sale at the show `show`: blocked for the theater, or for that show."""
    blocks = connection.ops.quote_name(ShowSeatBlock._meta.db_table)
    return f"(s.blocked OR EXISTS (SELECT 1 FROM {blocks} b WHERE b.schedule_id = {show} AND b.seat_id = s.id))"


def _labels_in(labels: list[str]) -> str:
    return f"s.label IN ({', '.join(['%s'] * len(labels))})"


def show_and_seats(*, public_id: str, labels: list[str]) -> list[tuple[Any, ...]]:
    """The show `public_id` with its seats `labels`, one row a seat (schedule id, theater id, date, start time,
    theater name, seat id, label, blocked for the theater or the show, sold); one row with a NULL seat when it has
    none of them, no rows when there is no such show."""
    quote = connection.ops.quote_name
    schedules, theaters, seats = (quote(m._meta.db_table) for m in (Schedule, Theater, Seat))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT sc.id, sc.theater_id, sc.date, sc.start_time, t.name, s.id, s.label, {_blocked('sc.id')}, "
            f"{_sold('sc.id')} "
            f"FROM {schedules} sc JOIN {theaters} t ON t.id = sc.theater_id "
            f"LEFT JOIN {seats} s ON s.theater_id = sc.theater_id AND {_labels_in(labels)} WHERE sc.public_id = %s",
            [*labels, public_id],
        )
        return cursor.fetchall()


def seats(*, schedule_pk: int, theater_pk: int, labels: list[str]) -> list[tuple[Any, ...]]:
    """The seats `labels` of the theater, one row each (id, label, blocked for the theater or the show `schedule_pk`,
    sold for it)."""
    table = connection.ops.quote_name(Seat._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT s.id, s.label, {_blocked('%s')}, {_sold('%s')} FROM {table} s "
            f"WHERE s.theater_id = %s AND {_labels_in(labels)}",
            [schedule_pk, schedule_pk, theater_pk, *labels],
        )
        return cursor.fetchall()


def day_counter_next(*, day: datetime.date) -> int:
    """The day's next sequence number; call it inside the transaction that uses it.

    Creates or increments the day's counter and locks it until commit, so two bookings never receive the same number
    and a rolled-back booking leaves no gap. One statement (PostgreSQL and SQLite >= 3.35): the insert-if-missing,
    lock and update it replaces were three round trips made inside the section every booking of the day waits for.
    """
    table = connection.ops.quote_name(ReservationDayCounter._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (day, last) VALUES (%s, 1) "
            f"ON CONFLICT (day) DO UPDATE SET last = {table}.last + 1 RETURNING last",
            [connection.ops.adapt_datefield_value(day)],
        )
        (last,) = cursor.fetchone()
    return int(last)


def reservation_insert_postgresql(
    *,
    schedule_pk: int,
    seat_ids: list[int],
    customer_name: str,
    customer_key: str,
    password_hash: str,
    status: str,
    now: datetime.datetime,
    day: datetime.date,
) -> tuple[int, str]:
    """PostgreSQL (`has_stored_functions`): the day's number, the reservation and its seats in one statement; the
    reservation's id and number. `cinema_reservation_id_next` is migration 0003's upsert of the day's counter, locked
    until the commit."""
    quote = connection.ops.quote_name
    reservations, reserved = quote(Reservation._meta.db_table), quote(ReservedSeat._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH reservation AS ("
            f" INSERT INTO {reservations} (public_id, schedule_id, customer_name, customer_key, password_hash, status,"
            f" reserved_at, cancel_source) VALUES (cinema_reservation_id_next(%s), %s, %s, %s, %s, %s, %s, '')"
            f" RETURNING id, public_id"
            f"), seats AS ("
            f" INSERT INTO {reserved} (reservation_id, schedule_id, seat_id, active)"
            f" SELECT reservation.id, %s, seat.id, true"
            f" FROM reservation, unnest(%s::bigint[]) WITH ORDINALITY AS seat (id, n) ORDER BY seat.n"
            f") SELECT id, public_id FROM reservation",
            [day, schedule_pk, customer_name, customer_key, password_hash, status, now, schedule_pk, seat_ids],
        )
        pk, public_id = cursor.fetchone()
    return pk, public_id
