"""A show's rules, whichever door a write comes through: no show in the past, no two shows overlapping in one theater,
a show with sold seats keeps its theater and times, and a reserved seat is always a seat of its show's theater.

The service and the admin's form give the messages (both databases); on PostgreSQL the database refuses the same
rows written around the service (migration 0004), each with a control showing the row gets in without the rule.
"""

from __future__ import annotations

import contextlib
import datetime

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import translation

from cinema import services
from cinema.models import Reservation, ReservedSeat, Schedule, Seat
from mcpsite.core.errors import Conflict, InvalidParams

from .conftest import make_schedule

pytestmark = pytest.mark.django_db


def schedule_form(schedule: Schedule, **changes) -> dict[str, str]:
    data = {
        "movie": str(schedule.movie_id),
        "theater": str(schedule.theater_id),
        "date": schedule.date.isoformat(),
        "start_time": f"{schedule.start_time:%H:%M}",
        "end_time": f"{schedule.end_time:%H:%M}",
    }
    return {**data, **changes}


# --- a show with sold seats stays where it was sold -------------------------------------------------------------


@pytest.mark.parametrize(
    "change", [{"theater": "t02"}, {"start_time": "10:30"}, {"date": "2026-02-21"}, {"end_time": "12:30"}]
)
def test_admin_refuses_moving_a_show_with_sold_seats(admin_client, seed_world, booked, change):
    s001 = seed_world["s001"]
    if "theater" in change:
        change = {"theater": str(seed_world["t02"].pk)}
    response = admin_client.post(f"/admin/cinema/schedule/{s001.pk}/change/", schedule_form(s001, **change))
    assert response.status_code == 200  # the form again, with the reason
    assert "s001 は販売済みの座席があるため" in response.content.decode()
    s001.refresh_from_db()
    assert (s001.theater, s001.date, f"{s001.start_time:%H:%M}") == (seed_world["t01"], seed_world["day"], "10:00")
    assert ReservedSeat.objects.filter(schedule=s001, seat__theater=seed_world["t01"], active=True).count() == 2


def test_refusal_reads_in_english_for_english_staff(admin_client, seed_world, booked):
    s001 = seed_world["s001"]
    response = admin_client.post(
        f"/admin/cinema/schedule/{s001.pk}/change/",
        schedule_form(s001, theater=str(seed_world["t02"].pk)),
        headers={"Accept-Language": "en"},
    )
    assert "Show s001 has sold seats: its theater, date and times cannot change." in response.content.decode()


def test_a_sold_show_may_change_its_film_and_an_unsold_show_may_move(admin_client, seed_world, booked):
    s001, s002 = seed_world["s001"], seed_world["s002"]
    response = admin_client.post(
        f"/admin/cinema/schedule/{s001.pk}/change/", schedule_form(s001, movie=str(seed_world["m002"].pk))
    )
    assert response.status_code == 302
    moved = schedule_form(s002, theater=str(seed_world["t01"].pk), start_time="15:30", end_time="17:30")
    response = admin_client.post(f"/admin/cinema/schedule/{s002.pk}/change/", moved)
    assert response.status_code == 302
    s002.refresh_from_db()
    assert s002.theater == seed_world["t01"]


def test_a_show_whose_cancelled_reservations_name_seats_keeps_its_theater_but_may_change_time(seed_world, booked):
    services.reservation_cancel(reservation=booked, source=Reservation.Source.STAFF)
    s001 = Schedule.objects.get(public_id="s001")
    s001.theater = seed_world["t02"]
    with pytest.raises(Conflict) as refused:
        services.schedule_save(schedule=s001)
    assert "cancelled reservations" in refused.value.detail
    s001 = Schedule.objects.get(public_id="s001")
    s001.start_time, s001.end_time = datetime.time(9, 0), datetime.time(9, 50)
    services.schedule_save(schedule=s001)
    assert Schedule.objects.get(public_id="s001").start_time == datetime.time(9, 0)


# --- no overlap, no past --------------------------------------------------------------------------------------


def test_admin_refuses_a_show_overlapping_another_in_the_theater(admin_client, seed_world):
    s001 = seed_world["s001"]  # t01 10:00-12:00
    data = schedule_form(s001, start_time="10:30", end_time="")
    response = admin_client.post("/admin/cinema/schedule/add/", data)
    assert response.status_code == 200
    page = response.content.decode()
    assert "s001 2026-02-20 10:00–12:00" in page and "と重なります" in page
    assert Schedule.objects.count() == 3


@pytest.mark.parametrize(
    ("day", "start", "end", "overlaps"),
    [
        ("2026-02-20", "10:30", "11:00", True),  # inside s001 (10:00-12:00)
        ("2026-02-20", "09:00", "10:01", True),
        ("2026-02-20", "09:00", "10:00", False),  # back to back
        ("2026-02-20", "12:00", "12:30", False),
        ("2026-02-20", "15:00", "15:30", True),  # s003 13:00-15:15
        ("2026-02-19", "23:00", "10:30", True),  # a late show of the day before, past midnight into s001
        ("2026-02-19", "23:00", "09:30", False),
        ("2026-02-20", "22:00", "01:00", False),
    ],
)
def test_overlap_rule_is_the_same_in_the_service_and_in_postgresql(seed_world, day, start, end, overlaps):
    show = Schedule(
        movie=seed_world["m001"],
        theater=seed_world["t01"],
        date=datetime.date.fromisoformat(day),
        start_time=datetime.time.fromisoformat(start),
        end_time=datetime.time.fromisoformat(end),
    )
    assert (services.schedule_overlapping(schedule=show) is not None) is overlaps
    if connection.vendor != "postgresql":
        return
    # Written around the service: the exclusion constraint agrees.
    refused = pytest.raises(IntegrityError, match="cinema_schedule_no_overlap")
    with refused if overlaps else contextlib.nullcontext(), transaction.atomic():
        show.save()


def test_the_overlap_check_spans_midnight_both_ways(seed_world):
    late = services.schedule_save(
        schedule=Schedule(
            movie=seed_world["m001"], theater=seed_world["t02"], date=datetime.date(2026, 2, 20),
            start_time=datetime.time(23, 0), end_time=datetime.time(1, 0),
        )
    )  # fmt: skip
    early = Schedule(
        movie=seed_world["m001"], theater=seed_world["t02"], date=datetime.date(2026, 2, 21),
        start_time=datetime.time(0, 30), end_time=datetime.time(2, 0),
    )  # fmt: skip
    with pytest.raises(Conflict) as refused:
        services.schedule_save(schedule=early)
    assert late.public_id in str(refused.value.detail)


def test_a_show_is_never_created_or_moved_into_the_past(admin_client, seed_world):
    # The clock is 2026-02-20 08:00.
    data = schedule_form(seed_world["s001"], date="2020-01-01", end_time="")
    response = admin_client.post("/admin/cinema/schedule/add/", data)
    assert response.status_code == 200 and "過去に始まる上映は作れません" in response.content.decode()
    s003 = seed_world["s003"]
    with pytest.raises(InvalidParams) as refused:
        s003.date = datetime.date(2026, 2, 19)
        services.schedule_save(schedule=s003)
    assert "cannot start in the past" in refused.value.detail
    response = admin_client.post("/admin/cinema/schedule/add/", schedule_form(seed_world["s001"], start_time="18:00"))
    assert response.status_code == 302
    assert Schedule.objects.count() == 4


def test_messages_are_translated_where_they_are_shown_and_english_for_tools(seed_world):
    show = Schedule(
        movie=seed_world["m001"], theater=seed_world["t01"], date=datetime.date(2026, 2, 20),
        start_time=datetime.time(10, 30), end_time=datetime.time(11, 0),
    )  # fmt: skip
    with translation.override("ja"), pytest.raises(Conflict) as refused:
        services.schedule_validate(schedule=show)
    assert refused.value.detail == "The show overlaps show s001 2026-02-20 10:00–12:00 in シアター1."
    with translation.override("ja"):
        assert refused.value.human == "この上映は シアター1 の上映 s001 2026-02-20 10:00–12:00 と重なります。"


# --- PostgreSQL: the database refuses what the service refuses ------------------------------------------------

postgres_only = pytest.mark.postgres


def _insert_reserved_seat(reservation: Reservation, seat: Seat) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO cinema_reservedseat (reservation_id, schedule_id, seat_id, active) VALUES (%s, %s, %s, true)",
            [reservation.pk, reservation.schedule_id, seat.pk],
        )


def alter_table(sql: str) -> None:
    """DDL inside the test's transaction (rolled back with it): the foreign keys' checks of the rows written so far
    run first, as ALTER TABLE needs."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(sql)


@contextlib.contextmanager
def trigger_disabled(table: str, name: str):
    alter_table(f"ALTER TABLE {table} DISABLE TRIGGER {name}")
    try:
        yield
    finally:
        alter_table(f"ALTER TABLE {table} ENABLE TRIGGER {name}")


@postgres_only
def test_postgresql_refuses_a_reserved_seat_of_another_theater(seed_world, booked):
    other = Seat.objects.get(theater=seed_world["t02"], label="A1")
    with pytest.raises(IntegrityError, match="not in the theater of show"), transaction.atomic():
        _insert_reserved_seat(booked, other)
    with pytest.raises(IntegrityError, match="not in the theater of show"), transaction.atomic():
        ReservedSeat.objects.filter(reservation=booked, seat__label="C3").update(seat=other)
    assert not ReservedSeat.objects.filter(seat=other).exists()


@postgres_only
def test_control_without_the_trigger_a_seat_of_another_theater_gets_in(seed_world, booked):
    other = Seat.objects.get(theater=seed_world["t02"], label="A1")
    with trigger_disabled("cinema_reservedseat", "cinema_reserved_seat_in_theater_insert"), transaction.atomic():
        _insert_reserved_seat(booked, other)
    assert ReservedSeat.objects.filter(reservation=booked, seat=other).exists()


@postgres_only
def test_postgresql_refuses_moving_a_booked_show_to_another_theater(seed_world, booked):
    with pytest.raises(IntegrityError, match="its theater cannot change"), transaction.atomic():
        Schedule.objects.filter(public_id="s001").update(theater=seed_world["t02"])
    with trigger_disabled("cinema_schedule", "cinema_schedule_theater_fixed"), transaction.atomic():
        Schedule.objects.filter(public_id="s001").update(theater=seed_world["t02"])  # the control: it gets in
    assert Schedule.objects.get(public_id="s001").theater == seed_world["t02"]


@postgres_only
def test_control_without_the_exclusion_constraint_an_overlapping_show_gets_in(seed_world):
    alter_table("ALTER TABLE cinema_schedule DROP CONSTRAINT cinema_schedule_no_overlap")
    make_schedule(seed_world["m001"], seed_world["t01"], seed_world["day"], "10:30", "11:00")
    assert Schedule.objects.filter(theater=seed_world["t01"], date=seed_world["day"]).count() == 3


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01"])
def test_the_first_and_last_days_get_an_answer_not_an_error(admin_client, seed_world, day):
    data = schedule_form(seed_world["s001"], date=day, end_time="01:00")
    response = admin_client.post("/admin/cinema/schedule/add/", data)
    assert response.status_code in (200, 302)
