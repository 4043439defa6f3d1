"""seed_cinema: the seed's examples, shows from today, idempotent."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from cinema.models import Movie, Reservation, Schedule, Theater

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_hashes(settings):
    """The seed books through the real service; argon2 for ~100 demo bookings would only slow this test."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _counts():
    return [m.objects.count() for m in (Movie, Theater, Schedule, Reservation)]


def test_seed_is_idempotent_and_uses_the_seed_examples(call_tool):
    call_command("seed_cinema", days=2, stdout=StringIO())
    first = _counts()
    call_command("seed_cinema", days=2, stdout=StringIO())
    assert _counts() == first
    assert Movie.objects.get(public_id="m001").title == "スタームービー"
    assert Theater.objects.get(public_id="t02").seats.count() == 100
    s001 = Schedule.objects.get(public_id="s001")
    assert (str(s001.date), s001.start_time.isoformat(), s001.theater.public_id) == ("2026-02-20", "10:00:00", "t01")
    assert call_tool("get_seat_availability", {"schedule_id": "s001"})["reserved_count"] == 8
    assert Schedule.objects.filter(date=timezone.localdate()).count() == 10
    details = call_tool(
        "get_reservation_details",
        {
            "reservation_id": Reservation.objects.order_by("pk").first().public_id,
            "reservation_password": "mypassword123",
        },
    )
    assert details["schedule"]["schedule_id"] == "s001"


def test_scale_adds_benchmark_films(call_tool):
    call_command("seed_cinema", days=1, scale=1, stdout=StringIO(), stderr=StringIO())
    assert Movie.objects.filter(title__startswith="ベンチ映画").count() == 100
    show = Schedule.objects.filter(movie__title="ベンチ映画0001").get()
    assert show.theater.seats.count() == 500
    assert call_tool("get_seat_availability", {"schedule_id": show.public_id})["reserved_count"] > 0
