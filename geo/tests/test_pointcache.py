"""The point cache (our own in-memory LRU backend) keeps LocMemCache's semantics: misses, expiry, culling, versions."""

import time

import pytest
from django.core.cache.backends.locmem import LocMemCache

from geo.pointcache import PointMemoryCache


@pytest.fixture(params=[LocMemCache, PointMemoryCache])
def cache(request):
    """Each behaviour is checked on Django's LocMemCache too, so the two cannot drift apart."""
    backend = request.param(f"test-{request.param.__name__}", {"OPTIONS": {"MAX_ENTRIES": 4, "CULL_FREQUENCY": 2}})
    backend.clear()
    yield backend
    backend.clear()


def test_get_many_returns_hits_only(cache):
    cache.set_many({"a": ("13101", "東京都千代田区"), "b": (None, None)}, timeout=60)
    assert cache.get_many(["a", "b", "missing"]) == {"a": ("13101", "東京都千代田区"), "b": (None, None)}


def test_expired_entries_are_misses_and_removed(cache, monkeypatch):
    cache.set_many({"old": ("1", "x")}, timeout=10)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 11)
    assert cache.get_many(["old"]) == {}
    assert not cache.has_key("old")


def test_values_are_copies(cache):
    value = ["13101", "東京都千代田区"]
    cache.set_many({"k": value}, timeout=60)
    value[0] = "changed"
    assert cache.get_many(["k"])["k"] == ["13101", "東京都千代田区"]


def test_max_entries_culls(cache):
    cache.set_many({f"k{i}": (str(i), "x") for i in range(10)}, timeout=60)
    assert len(cache.get_many([f"k{i}" for i in range(10)])) <= 4


def test_versions_are_separate(cache):
    cache.set_many({"k": ("1", "x")}, timeout=60, version=2)
    assert cache.get_many(["k"]) == {}
    assert cache.get_many(["k"], version=2) == {"k": ("1", "x")}


def test_single_key_calls_read_what_batches_wrote_and_back(cache):
    cache.set_many({"a": ("13101", "東京都千代田区")}, timeout=60)
    cache.set("b", (None, None), timeout=60)
    assert cache.add("c", ("1", None), timeout=60) and not cache.add("c", ("2", None), timeout=60)
    cache.set("n", 5, timeout=60)
    assert cache.get("a") == ("13101", "東京都千代田区")
    assert cache.get_many(["b", "c"]) == {"b": (None, None), "c": ("1", None)}
    assert cache.incr("n") == 6 and cache.get("missing", "default") == "default"


def test_a_tuple_holding_a_mutable_value_is_still_a_copy(cache):
    value = ("13101", ["東京都"])
    cache.set_many({"k": value}, timeout=60)
    value[1].append("changed")
    assert cache.get_many(["k"])["k"] == ("13101", ["東京都"])
    assert cache.get("k") == ("13101", ["東京都"])


def test_culling_drops_the_least_recently_used(cache):
    cache.set_many({f"k{i}": (str(i), "x") for i in range(4)}, timeout=60)
    assert cache.get("k0") == ("0", "x")  # k0 is now the most recently used
    cache.set("k4", ("4", "x"), timeout=60)  # full: culls half, the least recently used (k1, k2)
    assert cache.has_key("k0") and cache.has_key("k4")
    assert not cache.has_key("k1") and not cache.has_key("k2")


def test_touch_delete_and_delete_many(cache, monkeypatch):
    cache.set_many({"a": ("1", "x"), "b": ("2", "x"), "c": ("3", "x")}, timeout=10)
    assert cache.touch("a", timeout=100) and not cache.touch("missing")
    assert cache.delete("b") and not cache.delete("b")
    cache.delete_many(["c", "missing"])
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 11)
    assert cache.get_many(["a", "b", "c"]) == {"a": ("1", "x")}


def test_instances_of_one_location_share_their_entries(cache):
    """Django makes a backend instance per thread: they must see one another's entries."""
    twin = type(cache)(f"test-{type(cache).__name__}", {"OPTIONS": {"MAX_ENTRIES": 4, "CULL_FREQUENCY": 2}})
    cache.set("shared", ("1", "x"), timeout=60)
    assert twin.get("shared") == ("1", "x")
