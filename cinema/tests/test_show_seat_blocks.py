"""Seats blocked for one show, beside the theater's own blocks: the tools treat both alike, the service refuses a sold
seat, and the database keeps the rules for rows written around the service (migration 0006; each with a control
showing the row gets in without its trigger)."""

from __future__ import annotations

import contextlib

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from cinema import services
from cinema.models import Reservation, ReservedSeat, Schedule, Seat, ShowSeatBlock
from mcpsite.core.db import has_stored_functions
from mcpsite.core.errors import Conflict, InvalidParams

from .test_schedule_rules import schedule_form

pytestmark = pytest.mark.django_db

BASE = {"schedule_id": "s001", "reservation_password": "mypassword123"}


def blocked_labels(schedule: Schedule) -> set[str]:
    return set(ShowSeatBlock.objects.filter(schedule=schedule).values_list("seat__label", flat=True))


# --- the tools see a show's block as a theater's block -------------------------------------------------------------


def test_a_seat_blocked_for_one_show_is_blocked_there_only(call_tool, seed_world):
    services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["B2", "C5"])
    s001 = call_tool("get_seat_availability", {"schedule_id": "s001"})
    assert {"seat_id": "B2", "row": "B", "column": 2, "status": "blocked"} in s001["seats"]
    assert (s001["available_count"], s001["reserved_count"]) == (98, 0)
    s003 = call_tool("get_seat_availability", {"schedule_id": "s003"})  # the same theater, another show
    assert {"seat_id": "B2", "row": "B", "column": 2, "status": "available"} in s003["seats"]
    assert s003["available_count"] == 100


def test_the_show_schedule_counts_a_show_block_as_a_theater_block(call_tool, seed_world):
    services.theater_set_layout(theater=seed_world["t01"], rows=10, columns=10, blocked={"A1"})
    services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["A1", "B2"])  # A1: blocked both ways
    shows = call_tool("get_show_schedule", {"movie_id": "m001", "date": "2026-02-20"})["schedules"]
    s001 = next(show for show in shows if show["schedule_id"] == "s001")
    assert (s001["available_seats_count"], s001["total_seats_count"]) == (98, 98)


def test_reserve_seats_refuses_a_show_block_as_a_theater_block(rpc, seed_world):
    services.theater_set_layout(theater=seed_world["t01"], rows=10, columns=10, blocked={"A1"})
    services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["B2"])
    theater_block = rpc("reserve_seats", {**BASE, "seats": ["A1"]})["error"]
    show_block = rpc("reserve_seats", {**BASE, "seats": ["B2"]})["error"]
    assert {**theater_block, "data": theater_block["data"].replace("A1", "B2")} == show_block
    assert show_block == {
        "code": -32602,
        "message": "Invalid params",
        "data": "seats: Seat B2 cannot be reserved (blocked)",
    }
    assert not Reservation.objects.exists()
    ok = rpc("reserve_seats", {**BASE, "schedule_id": "s003", "seats": ["B2"]})["result"]  # another show: for sale
    assert ok["reserved_seats"] == ["B2"]


def test_unblocking_puts_the_seat_back_on_sale(call_tool, seed_world):
    services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["B2", "B3"])
    assert services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["B3"]) == ["B3"]
    assert blocked_labels(seed_world["s001"]) == {"B3"}
    booking = call_tool("reserve_seats", {**BASE, "seats": ["B2"]})
    assert booking["status"] == "confirmed"


# --- the service's refusals --------------------------------------------------------------------------------------


def test_a_sold_seat_cannot_be_blocked_for_its_show(seed_world, booked):
    with pytest.raises(Conflict) as refused:
        services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["A1", "C3"])
    assert refused.value.data == "These seats are reserved at show s001; cancel their reservations first: C3"
    assert blocked_labels(seed_world["s001"]) == set()  # all or nothing
    services.reservation_cancel(reservation=booked, source=Reservation.Source.STAFF)
    services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["C3"])  # freed by the cancellation
    assert blocked_labels(seed_world["s001"]) == {"C3"}


def test_a_seat_the_theater_lacks_cannot_be_blocked(seed_world):
    with pytest.raises(InvalidParams) as refused:
        services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["A1", "K1"])
    assert refused.value.data == "No such seat in シアター1: K1"
    assert blocked_labels(seed_world["s001"]) == set()


def test_a_show_with_blocked_seats_keeps_its_theater(seed_world):
    s001 = seed_world["s001"]
    services.show_seat_blocks_set(schedule=s001, seats=["B2"])
    s001.theater = seed_world["t02"]
    with pytest.raises(Conflict) as refused:
        services.schedule_save(schedule=s001)
    assert "has seats blocked for it: its theater cannot change" in refused.value.data
    assert Schedule.objects.get(pk=s001.pk).theater == seed_world["t01"]


def test_a_layout_that_drops_a_seat_drops_its_show_blocks(seed_world):
    services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["J10", "A1"])
    services.theater_set_layout(theater=seed_world["t01"], rows=9, columns=10)
    assert blocked_labels(seed_world["s001"]) == {"A1"}


# --- the database keeps the rules, whoever writes ----------------------------------------------------------------


def _insert_block(schedule: Schedule, seat: Seat) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO cinema_showseatblock (schedule_id, seat_id, blocked_at) VALUES (%s, %s, %s)",
            [schedule.pk, seat.pk, timezone.now()],
        )


def _insert_reserved_seat(reservation: Reservation, seat: Seat) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO cinema_reservedseat (reservation_id, schedule_id, seat_id, active) VALUES (%s, %s, %s, %s)",
            [reservation.pk, reservation.schedule_id, seat.pk, True],
        )


@contextlib.contextmanager
def trigger_off(table: str, name: str):
    """The trigger `name` off inside the test's transaction (rolled back with it)."""
    with connection.cursor() as cursor:
        if has_stored_functions(connection):
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {name}")
        else:
            cursor.execute(f"DROP TRIGGER {name}")
    yield


def _seat(seed_world, theater: str, label: str) -> Seat:
    return Seat.objects.get(theater=seed_world[theater], label=label)


def test_the_database_refuses_blocking_a_sold_seat(seed_world, booked):
    with pytest.raises(IntegrityError, match="cinema_show_seat_block_unsold|cannot be blocked"), transaction.atomic():
        _insert_block(seed_world["s001"], _seat(seed_world, "t01", "C3"))
    assert not ShowSeatBlock.objects.exists()


def test_control_without_the_trigger_a_sold_seat_gets_blocked(seed_world, booked):
    with transaction.atomic(), trigger_off("cinema_showseatblock", "cinema_show_seat_block_valid_insert"):
        _insert_block(seed_world["s001"], _seat(seed_world, "t01", "C3"))
        assert blocked_labels(seed_world["s001"]) == {"C3"}
        transaction.set_rollback(True)


def test_the_database_refuses_a_block_of_a_seat_of_another_theater(seed_world):
    with pytest.raises(IntegrityError, match="not in the theater of"), transaction.atomic():
        _insert_block(seed_world["s001"], _seat(seed_world, "t02", "A1"))
    with transaction.atomic(), trigger_off("cinema_showseatblock", "cinema_show_seat_block_valid_insert"):
        _insert_block(seed_world["s001"], _seat(seed_world, "t02", "A1"))  # the control: it gets in
        assert ShowSeatBlock.objects.filter(schedule=seed_world["s001"]).count() == 1
        transaction.set_rollback(True)


def test_the_database_refuses_booking_a_blocked_seat(seed_world, booked):
    services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["B2"])
    with (
        pytest.raises(IntegrityError, match="cinema_reserved_seat_not_blocked|is blocked at show"),
        transaction.atomic(),
    ):
        _insert_reserved_seat(booked, _seat(seed_world, "t01", "B2"))
    with (
        pytest.raises(IntegrityError, match="cinema_reserved_seat_not_blocked|is blocked at show"),
        transaction.atomic(),
    ):
        ReservedSeat.objects.filter(reservation=booked, seat__label="C3").update(seat=_seat(seed_world, "t01", "B2"))
    with transaction.atomic(), trigger_off("cinema_reservedseat", "cinema_reserved_seat_not_blocked_insert"):
        _insert_reserved_seat(booked, _seat(seed_world, "t01", "B2"))  # the control: it gets in
        assert ReservedSeat.objects.filter(reservation=booked, seat__label="B2").exists()
        transaction.set_rollback(True)


def test_the_database_keeps_a_show_with_blocks_in_its_theater(seed_world):
    services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["B2"])
    move = {"theater": seed_world["t02"]}
    with pytest.raises(IntegrityError, match="cinema_schedule_blocks_keep_theater|its theater cannot change"):
        with transaction.atomic():
            Schedule.objects.filter(public_id="s001").update(**move)
    with transaction.atomic(), trigger_off("cinema_schedule", "cinema_schedule_blocks_keep_theater"):
        Schedule.objects.filter(public_id="s001").update(**move)  # the control: it moves
        assert Schedule.objects.get(public_id="s001").theater == seed_world["t02"]
        transaction.set_rollback(True)


def test_a_booking_refused_by_the_database_is_the_blocked_seat_error(rpc, seed_world, monkeypatch):
    """A block written between the booking's last check and its insert: the database refuses the seat, and the
    caller gets the blocked-seat error, not a 500."""
    real = services._seats_for_booking

    def block_meanwhile(**kwargs):
        seats = real(**kwargs)
        ShowSeatBlock.objects.get_or_create(
            schedule=seed_world["s001"], seat=_seat(seed_world, "t01", "B2"), defaults={"blocked_at": timezone.now()}
        )
        return seats

    monkeypatch.setattr(services, "_seats_for_booking", block_meanwhile)
    error = rpc("reserve_seats", {**BASE, "seats": ["B2"]})["error"]
    assert error == {"code": -32602, "message": "Invalid params", "data": "seats: Seat B2 cannot be reserved (blocked)"}
    assert not Reservation.objects.exists()


# --- the show's page --------------------------------------------------------------------------------------------


def test_staff_block_and_unblock_seats_on_the_shows_page(admin_client, seed_world, booked):
    s001 = seed_world["s001"]
    url = f"/admin/cinema/schedule/{s001.pk}/change/"
    page = admin_client.get(url).content.decode()
    assert 'value="C3" id="id_blocked_seats_22" disabled' in page  # sold: cannot be ticked
    response = admin_client.post(url, {**schedule_form(s001), "blocked_seats": ["B2", "B3"]})
    assert response.status_code == 302
    assert blocked_labels(s001) == {"B2", "B3"}
    assert set(ShowSeatBlock.objects.values_list("blocked_by__username", flat=True)) == {"admin"}
    admin_client.post(url, {**schedule_form(s001), "blocked_seats": ["B3"]})
    assert blocked_labels(s001) == {"B3"}


def test_the_shows_page_refuses_blocking_a_sold_seat_with_the_reason(admin_client, seed_world, booked):
    s001 = seed_world["s001"]
    response = admin_client.post(
        f"/admin/cinema/schedule/{s001.pk}/change/", {**schedule_form(s001), "blocked_seats": ["C3"]}
    )
    assert response.status_code == 200
    assert "C3" in response.context["adminform"].form.non_field_errors()[0]
    assert blocked_labels(s001) == set()


def test_a_seat_blocked_for_the_show_and_the_theater_keeps_its_show_block(admin_client, seed_world):
    s001 = seed_world["s001"]
    services.show_seat_blocks_set(schedule=s001, seats=["A1", "B2"])
    services.theater_set_layout(theater=seed_world["t01"], rows=10, columns=10, blocked={"A1"})
    # A browser sends no disabled box: A1's block is kept, B2's is lifted.
    response = admin_client.post(f"/admin/cinema/schedule/{s001.pk}/change/", schedule_form(s001))
    assert response.status_code == 302
    assert blocked_labels(s001) == {"A1"}


def test_moving_a_show_while_ticking_seats_asks_to_save_the_move_first(admin_client, seed_world):
    s001 = seed_world["s001"]
    data = schedule_form(s001, theater=str(seed_world["t02"].pk), blocked_seats=["A1"])
    response = admin_client.post(f"/admin/cinema/schedule/{s001.pk}/change/", data)
    assert response.status_code == 200
    assert "先に新しいシアターで上映スケジュールを保存してから" in response.content.decode()
    assert not ShowSeatBlock.objects.exists()
    assert Schedule.objects.get(pk=s001.pk).theater == seed_world["t01"]


def test_staff_who_may_only_view_shows_see_the_page(client, django_user_model, seed_world):
    from django.contrib.auth.models import Permission

    services.show_seat_blocks_set(schedule=seed_world["s001"], seats=["B2"])
    clerk = django_user_model.objects.create_user("clerk", password="x" * 12, is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_schedule"))
    client.force_login(clerk)
    response = client.get(f"/admin/cinema/schedule/{seed_world['s001'].pk}/change/")
    assert response.status_code == 200
    assert 'data-seat="B2"' in response.content.decode()
