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


def test_movie_list_is_five_queries_for_any_catalogue(django_assert_num_queries):
    theater = make_theater(rows=2, columns=2)
    for i in range(60):  # ten-minute shows, one after another
        start, end = (f"{n // 6:02d}:{(n % 6) * 10:02d}" for n in (i, i + 1))
        make_schedule(make_movie(f"映画{i}"), theater, DAY, start, end)
    with django_assert_num_queries(5):
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
    shows = [make_schedule(make_movie(f"映画{i}"), theater, day, f"{10 + i}:00", f"{10 + i}:50") for i in range(3)]
    for show, seats in zip(shows, (["A1", "A2"], ["A1", "A2"], ["A1"]), strict=True):
        services.reservation_create(schedule_id=show.public_id, seats=seats, password="pw-123456")
    ranking = selectors.movie_popularity(start=day)
    assert [(r.booked_seats_count, r.popularity_rank) for r in ranking] == [(2, 1), (2, 1), (1, 3)]


def test_popularity_over_a_period_adds_up_its_days(freeze_now):
    """The seed's 期間: seats booked for the shows of every day from start to end; capacity likewise."""
    from cinema.tests.conftest import SEED_MORNING

    freeze_now(SEED_MORNING)
    theater = make_theater(rows=1, columns=4)
    day = SEED_MORNING.date()
    later = day + datetime.timedelta(days=2)
    daily, once = make_movie("毎日の映画", public_id="m801"), make_movie("一日だけ", public_id="m802")
    first, second = make_schedule(daily, theater, day, "10:00"), make_schedule(daily, theater, later, "10:00")
    single = make_schedule(once, theater, day, "14:00")
    services.reservation_create(schedule_id=first.public_id, seats=["A1", "A2"], password="pw-123456")
    services.reservation_create(schedule_id=second.public_id, seats=["A1", "A2", "A3"], password="pw-123456")
    services.reservation_create(schedule_id=single.public_id, seats=["A1", "A2", "A3"], password="pw-123456")
    one_day = {r.movie_id: r.booked_seats_count for r in selectors.movie_popularity(start=day)}
    period = selectors.movie_popularity(start=day, end=later)
    assert one_day == {"m801": 2, "m802": 3}
    assert [(r.movie_id, r.booked_seats_count, r.capacity, r.popularity_rank) for r in period] == [
        ("m801", 5, 8, 1),
        ("m802", 3, 4, 2),
    ]


def test_recommendation_rule():
    assert selectors.is_recommended(rating=Decimal("4.5"), popularity=Decimal(0))
    assert selectors.is_recommended(rating=Decimal("4.0"), popularity=Decimal(80))
    assert selectors.is_recommended(rating=Decimal("4.0"), popularity=Decimal(0), genre_sells_best=True)
    assert not selectors.is_recommended(rating=Decimal("4.2"), popularity=Decimal("79.9"))
    assert not selectors.is_recommended(rating=Decimal("3.9"), popularity=Decimal(100), genre_sells_best=True)


def test_the_weeks_best_selling_genre_recommends_its_well_rated_films(freeze_now):
    """評価・ジャンル・人気度: a 4.0+ film whose genre sold the most seats in the 7 days ending on the day."""
    from cinema.tests.conftest import SEED_MORNING

    freeze_now(SEED_MORNING - datetime.timedelta(days=10))
    theater = make_theater(rows=1, columns=9)
    day = SEED_MORNING.date()
    horror = make_movie("ホラー大作", "3.0", public_id="m901", genre="ホラー")
    romance = make_movie("恋の話", "3.0", public_id="m902", genre="恋愛")
    new_horror = make_movie("新作ホラー", "4.1", public_id="m903", genre="ホラー")
    new_romance = make_movie("新作恋愛", "4.1", public_id="m904", genre="恋愛")
    # This week horror sold 3 seats and romance 2; ten days ago romance sold 9 (outside the week).
    week_ago = make_schedule(horror, theater, day - datetime.timedelta(days=6), "10:00")
    services.reservation_create(schedule_id=week_ago.public_id, seats=["A1", "A2", "A3"], password="pw-123456")
    this_week = make_schedule(romance, theater, day - datetime.timedelta(days=1), "10:00")
    services.reservation_create(schedule_id=this_week.public_id, seats=["A1", "A2"], password="pw-123456")
    long_ago = make_schedule(romance, theater, day - datetime.timedelta(days=7), "10:00")
    services.reservation_create(
        schedule_id=long_ago.public_id, seats=[f"A{n}" for n in range(1, 10)], password="pw-1234"
    )
    make_schedule(new_horror, theater, day, "18:00")
    make_schedule(new_romance, theater, day, "21:00")
    assert selectors.genres_selling_best(end=day) == {"ホラー"}
    flags = {row.movie.public_id: row.recommended for row in selectors.movie_list(on=day, query=None, limit=10)}
    assert flags == {"m903": True, "m904": False}
    assert selectors.genres_selling_best(end=day - datetime.timedelta(days=30)) == set()  # no sales: no genre


def test_reservation_counts_by_day_split_at_local_midnight(django_assert_num_queries):
    """Bookings are counted on their Tokyo day (a booking at 23:59 and one at 00:00 fall on two days), within
    [since, until), in one query."""
    from cinema.models import Reservation

    tokyo = datetime.timezone(datetime.timedelta(hours=9))
    show = make_schedule(make_movie(), make_theater(rows=1, columns=2), DAY)
    times = [
        datetime.datetime(2030, 4, 28, 23, 59, tzinfo=tokyo),  # before `since`: not counted
        datetime.datetime(2030, 4, 29, 0, 0, tzinfo=tokyo),
        datetime.datetime(2030, 4, 29, 23, 59, 59, tzinfo=tokyo),
        datetime.datetime(2030, 4, 30, 0, 0, tzinfo=tokyo),
        datetime.datetime(2030, 4, 30, 8, 0, tzinfo=tokyo),
        datetime.datetime(2030, 5, 2, 0, 0, tzinfo=tokyo),  # at `until`: not counted
    ]
    for n, moment in enumerate(times):
        Reservation.objects.create(
            public_id=f"r{n}", schedule=show, customer_name="客", password_hash="x", reserved_at=moment
        )
    since = datetime.datetime(2030, 4, 29, 0, 0, tzinfo=tokyo)
    with django_assert_num_queries(1):
        counts = selectors.reservation_counts_by_day(since=since, until=since + datetime.timedelta(days=3))
    assert counts == {datetime.date(2030, 4, 29): 2, datetime.date(2030, 4, 30): 2}
