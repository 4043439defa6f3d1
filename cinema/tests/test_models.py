"""The database itself refuses what must never happen, even when the services are bypassed."""

from __future__ import annotations

import datetime

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from cinema.models import Movie, Reservation, ReservedSeat, Seat
from cinema.tests.conftest import make_movie, make_schedule, make_theater

pytestmark = pytest.mark.django_db


def _reservation(schedule, public_id):
    return Reservation.objects.create(
        public_id=public_id, schedule=schedule, password_hash="argon2$x", reserved_at=timezone.now()
    )


def test_two_active_reservations_of_one_seat_are_refused():
    theater = make_theater(rows=1, columns=2)
    schedule = make_schedule(make_movie(), theater, datetime.date(2030, 1, 1))
    seat = Seat.objects.get(theater=theater, label="A1")
    first, second = _reservation(schedule, "r1"), _reservation(schedule, "r2")
    ReservedSeat.objects.create(reservation=first, schedule=schedule, seat=seat)
    with pytest.raises(IntegrityError), transaction.atomic():
        ReservedSeat.objects.create(reservation=second, schedule=schedule, seat=seat)
    # Once the first is no longer active (cancelled), the seat can be sold again.
    ReservedSeat.objects.filter(reservation=first).update(active=False)
    ReservedSeat.objects.create(reservation=second, schedule=schedule, seat=seat)
    assert ReservedSeat.objects.filter(seat=seat).count() == 2


def test_rating_must_be_between_1_and_5():
    with pytest.raises(IntegrityError), transaction.atomic():
        make_movie(rating="5.5")


def test_a_cancelled_reservation_must_say_when_and_by_whom():
    schedule = make_schedule(make_movie(), make_theater(rows=1, columns=1), datetime.date(2030, 1, 1))
    reservation = _reservation(schedule, "r1")
    reservation.status = Reservation.Status.CANCELLED
    with pytest.raises(IntegrityError), transaction.atomic():
        reservation.save()


def test_public_ids_follow_the_seed():
    movie = make_movie()
    theater = make_theater(rows=1, columns=1)
    schedule = make_schedule(movie, theater, datetime.date(2030, 1, 1), "10:00")
    assert movie.public_id == f"m{movie.pk:03d}"
    assert theater.public_id == f"t{theater.pk:02d}"
    assert schedule.public_id == f"s{schedule.pk:03d}"
    assert Movie.objects.get(pk=movie.pk).public_id == movie.public_id
    # The end time defaults to the start plus the running time.
    assert schedule.end_time == datetime.time(12, 0)
