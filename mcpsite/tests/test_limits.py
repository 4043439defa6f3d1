"""Rate limits count exactly, and a hit after the window's first is one increment of the shared counter."""

import pytest
from django.core.cache import caches

from mcpsite.core.limits import over_limit
from mcpsite.tests.ratewindow import start_in_a_fresh_window

pytestmark = pytest.mark.django_db


def test_hits_past_the_rate_are_limited_exactly():
    start_in_a_fresh_window("exact", "10/m", needed=5)
    hits = [over_limit(group="t", key="exact", rate="10/m") for _ in range(12)]
    assert hits == [False] * 10 + [True] * 2


def test_after_the_windows_first_hit_a_hit_is_one_increment_without_an_add(monkeypatch):
    """django-ratelimit adds the counter before every increment (a read that finds it there); counting
    increments first and adds only when the window has no counter yet."""
    cache = caches["default"]
    start_in_a_fresh_window("incr-first", "10/m", needed=5)
    adds = []
    real_add = cache.add
    monkeypatch.setattr(cache, "add", lambda *args, **kwargs: adds.append(args) or real_add(*args, **kwargs))
    over_limit(group="t", key="incr-first", rate="10/m")
    assert len(adds) == 1  # the window's first hit makes its counter
    for _ in range(5):
        over_limit(group="t", key="incr-first", rate="10/m")
    assert len(adds) == 1
