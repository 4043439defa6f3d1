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


def test_seed_is_idempotent_and_uses_the_seed_examples(call_tool, freeze_now):
    # In the morning: later in the evening the seed adds one more show of m001 (the replay show, tested below).
    freeze_now(timezone.localtime().replace(hour=9, minute=0, second=0, microsecond=0))
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


@pytest.mark.parametrize("hour", [9, 18, 21])
def test_the_seed_example_flow_replays_on_the_day_of_seeding(rpc, freeze_now, hour):
    """The seed's requests with today's date, at any hour of the evening: a スタームービー show is still to come."""
    now = freeze_now(timezone.localtime().replace(hour=hour, minute=40, second=0, microsecond=0))
    call_command("seed_cinema", days=1, stdout=StringIO())
    today = now.date().isoformat()
    movies = rpc("get_movie_list", {"date": today, "query": "スター", "limit": 10})["result"]["movies"]
    assert "m001" in [m["movie_id"] for m in movies]
    schedules = rpc("get_show_schedule", {"movie_id": "m001", "date": today})["result"]["schedules"]
    upcoming = [s for s in schedules if s["start_time"] > now.strftime("%H:%M")]
    assert upcoming, schedules
    schedule_id = upcoming[0]["schedule_id"]
    seats = rpc("get_seat_availability", {"schedule_id": schedule_id})["result"]["seats"]
    assert {s["seat_id"]: s["status"] for s in seats}.keys() >= {"A1", "A3"}
    booked = rpc(
        "reserve_seats",
        {
            "schedule_id": schedule_id,
            "seats": ["A1", "A3"],
            "reservation_password": "mypassword123",
            "customer_name": "田中太郎",
        },
    )["result"]
    assert booked["status"] == "confirmed" and booked["reserved_seats"] == ["A1", "A3"]
    details = rpc(
        "get_reservation_details",
        {"reservation_id": booked["reservation_id"], "reservation_password": "mypassword123"},
    )["result"]
    assert details["schedule"]["schedule_id"] == schedule_id and details["reserved_seats"] == ["A1", "A3"]
