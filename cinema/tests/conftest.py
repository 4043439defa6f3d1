"""Cinema fixtures: the seed's own examples (m001 スタームービー, t01 シアター1 10×10, s001 …)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.utils import timezone

from cinema import services
from cinema.models import Movie, Schedule, Theater

TOKYO = datetime.timezone(datetime.timedelta(hours=9))
# The seed's examples happen on 2026-02-20; tests that replay them run at 08:00 that morning.
SEED_MORNING = datetime.datetime(2026, 2, 20, 8, 0, tzinfo=TOKYO)


def make_theater(name="シアター1", rows=10, columns=10, blocked=(), public_id=None):
    theater = Theater.objects.create(name=name, rows=rows, columns=columns, public_id=public_id or "")
    return services.theater_set_layout(theater=theater, rows=rows, columns=columns, blocked=set(blocked))


def make_movie(title="スタームービー", rating="4.5", public_id=None, **extra):
    defaults = {"genre": "SF", "duration": 120, "description": "", "release_date": datetime.date(2026, 2, 1)}
    defaults.update(extra)
    return Movie.objects.create(title=title, rating=Decimal(rating), public_id=public_id or "", **defaults)


def make_schedule(movie, theater, date, start="10:00", end=None, public_id=None):
    return Schedule.objects.create(
        movie=movie,
        theater=theater,
        date=date,
        start_time=datetime.time.fromisoformat(start),
        end_time=datetime.time.fromisoformat(end) if end else None,
        public_id=public_id or "",
    )


@pytest.fixture
def freeze_now(monkeypatch):
    """freeze_now(aware_datetime): timezone.now() returns it (the clock of services and tools)."""

    def freeze(moment: datetime.datetime):
        monkeypatch.setattr(timezone, "now", lambda: moment)
        return moment

    return freeze


@pytest.fixture
def seed_world(db, freeze_now):
    """The seed's sample world on the morning of 2026-02-20."""
    freeze_now(SEED_MORNING)
    t1 = make_theater("シアター1", public_id="t01")
    t2 = make_theater("シアター2", public_id="t02")
    m1 = make_movie("スタームービー", "4.5", public_id="m001", description="宇宙冒険ストーリー")
    m2 = make_movie(
        "スターダスト",
        "4.2",
        public_id="m002",
        genre="ファンタジー",
        duration=135,
        description="星降る夜の恋物語",
        release_date=datetime.date(2026, 1, 15),
    )
    day = datetime.date(2026, 2, 20)
    s1 = make_schedule(m1, t1, day, "10:00", "12:00", public_id="s001")
    s2 = make_schedule(m1, t2, day, "14:00", "16:00", public_id="s002")
    s3 = make_schedule(m2, t1, day, "13:00", public_id="s003")
    return {"t01": t1, "t02": t2, "m001": m1, "m002": m2, "s001": s1, "s002": s2, "s003": s3, "day": day}


@pytest.fixture
def future_show(db):
    """A show tomorrow at 18:00 in a fresh 10×10 theater (for tests that use the real clock)."""
    theater = make_theater("シアターF", public_id="t09")
    movie = make_movie("スタームービー", public_id="m009")
    return make_schedule(movie, theater, timezone.localdate() + datetime.timedelta(days=1), "18:00")


@pytest.fixture
def booked(seed_world):
    """田中太郎's reservation of C3 and C4 for s001."""
    return services.reservation_create(
        schedule_id="s001", seats=["C3", "C4"], password="mypassword123", customer_name="田中太郎"
    ).reservation
