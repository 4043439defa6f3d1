"""Reads run a fixed number of queries however big the theater or the catalogue (no N+1)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from cinema import selectors, services
from cinema.tests.conftest import make_movie, make_schedule, make_theater

pytestmark = pytest.mark.django_db

DAY = datetime.date(2030, 5, 1)


def test_seat_map_is_two_queries_for_a_500_seat_show(django_assert_num_queries):
    theater = make_theater("大シアター", rows=20, columns=25, blocked={"A1"})
    schedule = make_schedule(make_movie(), theater, DAY)
    with django_assert_num_queries(2):
        seat_map = selectors.seat_map_get(schedule=schedule)
    assert len(seat_map.seats) == 500
    assert (seat_map.available_count, seat_map.blocked_count) == (499, 1)


def test_movie_list_is_four_queries_for_any_catalogue(django_assert_num_queries):
    theater = make_theater(rows=2, columns=2)
    for i in range(60):
        make_schedule(make_movie(f"映画{i}"), theater, DAY, f"{i // 6:02d}:{(i % 6) * 10:02d}")
    with django_assert_num_queries(4):
        rows = selectors.movie_list(on=DAY, query="映画", limit=100)
    assert len(rows) == 60


def test_schedule_list_is_two_queries(django_assert_num_queries):
    movie = make_movie()
    for n in range(5):
        make_schedule(movie, make_theater(f"T{n}", rows=2, columns=2), DAY + datetime.timedelta(days=n))
    with django_assert_num_queries(2):
        rows = selectors.schedule_list(movie=movie, first=DAY, last=DAY + datetime.timedelta(days=6))
    assert [r.total_seats_count for r in rows] == [4] * 5


def test_popularity_score_rule():
    # Half relative to the day's best seller, half the film's own occupancy.
    assert selectors.popularity_score(booked=180, top_booked=180, capacity=200) == Decimal("95.0")
    assert selectors.popularity_score(booked=90, top_booked=180, capacity=100) == Decimal("70.0")
    assert selectors.popularity_score(booked=0, top_booked=180, capacity=100) == Decimal("0.0")


def test_popularity_ranks_ties_alike(freeze_now):
    from cinema.tests.conftest import SEED_MORNING

    freeze_now(SEED_MORNING)
    theater = make_theater(rows=1, columns=9)
    day = SEED_MORNING.date()
    shows = [make_schedule(make_movie(f"映画{i}"), theater, day, f"{10 + i}:00") for i in range(3)]
    for show, seats in zip(shows, (["A1", "A2"], ["A1", "A2"], ["A1"]), strict=True):
        services.reservation_create(schedule_id=show.public_id, seats=seats, password="pw-123456")
    ranking = selectors.movie_popularity(on=day)
    assert [(r.booked_seats_count, r.popularity_rank) for r in ranking] == [(2, 1), (2, 1), (1, 3)]


def test_recommendation_rule():
    assert selectors.is_recommended(rating=Decimal("4.5"), popularity=Decimal(0))
    assert selectors.is_recommended(rating=Decimal("4.0"), popularity=Decimal(80))
    assert not selectors.is_recommended(rating=Decimal("4.2"), popularity=Decimal("79.9"))
    assert not selectors.is_recommended(rating=Decimal("3.9"), popularity=Decimal(100))
