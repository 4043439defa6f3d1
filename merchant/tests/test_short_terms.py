"""Terms of one or two characters go through the gram index (migration 0002), with the scan's results."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpsite.core.db import has_fts5, has_trigram_indexes
from merchant.models import Product
from merchant.search import DatabaseSearch
from merchant.search_keys import gram_tokens, short_grams
from merchant.sql import postgresql as postgresql_reads
from merchant.sql.postgresql import Candidates, GramStatistics

pytestmark = pytest.mark.django_db

# A small alphabet (kana, kanji, Latin, punctuation, a space), so short terms hit often and collide.
ALPHABET = "方眼抹茶ぼむぎーカレンダａBc-・ 　!"
words = st.text(alphabet=ALPHABET, min_size=1, max_size=12)


def test_grams_are_every_short_substring_without_whitespace():
    assert short_grams("方眼 ノ") == ["方", "眼", "ノ", "方眼"]
    assert gram_tokens("方眼") == "g65b9 g773c g65b9x773c"


def test_short_terms_use_the_gram_index():
    Product.objects.create(sku="B", name="無地ノート", price_cents=100, inventory_count=1)
    Product.objects.create(sku="A", name="方眼ノート", price_cents=100, inventory_count=1)
    with CaptureQueriesContext(connection) as queries:
        assert DatabaseSearch().search("方眼", limit=20) == [Product.objects.get(sku="A").pk]
    sql = " ".join(q["sql"] for q in queries)
    expected = "merchant_short_grams" if has_trigram_indexes(connection) else "merchant_product_grams"
    assert expected in sql


@pytest.fixture(params=["whole index", "tiny cap"])
def budget(request, monkeypatch):
    """With a tiny candidate cap, the cap is reached often, not only the index's end."""
    if request.param == "tiny cap":
        monkeypatch.setattr(DatabaseSearch, "candidate_cap", lambda self, limit: 2)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(words, min_size=1, max_size=12),
    renamed=st.lists(st.tuples(st.integers(min_value=0, max_value=11), words), max_size=3),
    deleted=st.lists(st.integers(min_value=0, max_value=11), max_size=2),
    query=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=2), min_size=1, max_size=3),
)
def test_indexed_short_terms_equal_the_scan(budget, names, renamed, deleted, query):
    """Whatever the catalogue and its edits (insert, update, delete triggers), index and scan agree."""
    Product.objects.all().delete()
    products = [
        Product.objects.create(sku=f"P{i}", name=name, price_cents=100, inventory_count=1)
        for i, name in enumerate(names)
    ]
    for index, name in renamed:
        if index < len(products):
            products[index].name = name
            products[index].save()
    for index in deleted:
        if index < len(products):
            Product.objects.filter(pk=products[index].pk).delete()
    text = " ".join(query)
    assert DatabaseSearch().search(text, limit=5) == DatabaseSearch(indexed=False).search(text, limit=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(words, min_size=1, max_size=12),
    query=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=4), min_size=1, max_size=3),
)
def test_indexed_terms_of_any_length_equal_the_scan(budget, names, query):
    """Long terms and several terms too: the trigram and gram indexes (joined up to the cap on SQLite) find what a
    scan finds."""
    Product.objects.all().delete()
    for i, name in enumerate(names):
        Product.objects.create(sku=f"P{i}", name=name, price_cents=100, inventory_count=1 if i % 5 else 0)
    text = " ".join(query)
    assert DatabaseSearch().search(text, limit=5) == DatabaseSearch(indexed=False).search(text, limit=5)


def _catalogue_statistics() -> GramStatistics:
    """Statistics that make every gram common, over the catalogue as it is now (its count and ids)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), coalesce(min(id), 0), coalesce(max(id), 0) FROM merchant_product")
        total, first_id, last_id = cursor.fetchone()
    return GramStatistics(max(total, 1), first_id, last_id, {"-": 1.0}, 0.5)


@pytest.fixture(params=["walk", "windows", "index", "walk too short", "index read stopped"])
def postgresql_read(request, monkeypatch):
    """Each of PostgreSQL's reads, and each fallback: a walk that stops before the cap (the index answers), a read of
    every match that stops at its bound (the walk answers). Windows of two ids, so several are read."""
    read = {"walk too short": "walk", "index read stopped": "index"}.get(request.param, request.param)
    monkeypatch.setattr(postgresql_reads, "gram_statistics", _catalogue_statistics)
    monkeypatch.setattr(Candidates, "_plan", lambda self, statistics, estimate: (read, 2))
    monkeypatch.setattr(DatabaseSearch, "candidate_cap", lambda self, limit: 2)
    if request.param == "walk too short":
        monkeypatch.setattr(postgresql_reads, "WALK_MARGIN", 0.001)
    if request.param == "index read stopped":
        monkeypatch.setattr(postgresql_reads, "INDEX_READ_MARGIN", 0.001)
        monkeypatch.setattr(postgresql_reads, "INDEX_READ_MIN", 1)


@pytest.mark.postgres
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(words, min_size=1, max_size=12),
    query=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=4), min_size=1, max_size=3),
)
def test_each_postgresql_read_equals_the_scan(postgresql_read, names, query):
    """Whichever read the statistics choose, and whichever answers past a bound, the candidates are the scan's."""
    Product.objects.all().delete()
    for i, name in enumerate(names):
        Product.objects.create(sku=f"P{i}", name=name, price_cents=100, inventory_count=1 if i % 5 else 0)
    text = " ".join(query)
    assert DatabaseSearch().search(text, limit=5) == DatabaseSearch(indexed=False).search(text, limit=5)


@pytest.mark.postgres
@pytest.mark.django_db
@given(key=st.text(alphabet=ALPHABET + "\t\n", max_size=16))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_stored_function_makes_the_grams_of_short_grams(key):
    """Migration 0002's `merchant_short_grams` writes `search_keys.short_grams` in SQL (the migration is frozen, so it
    keeps its own copy): the two give the same grams."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT merchant_short_grams(%s)", [key])
        assert sorted(cursor.fetchone()[0]) == sorted(short_grams(key))


@pytest.mark.postgres
def test_postgresql_reads_follow_the_statistics(monkeypatch):
    """After ANALYZE, a common term is walked in id order and a rare one read through the gram index; the walk never
    computes the gram array (0.4 ms a row), which migration 0005 prices so no plan does."""
    monkeypatch.setattr(postgresql_reads, "_statistics", {})
    Product.objects.bulk_create(
        Product(sku=f"M{i}", name=f"抹茶ラテ {i}", search_key=f"抹茶らて {i}", price_cents=100, inventory_count=1)
        for i in range(300)
    )
    Product.objects.create(sku="H", name="方眼ノート", price_cents=100, inventory_count=1)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE merchant_product")
        cursor.execute("SELECT procost FROM pg_proc WHERE proname = 'merchant_short_grams'")
        assert cursor.fetchone()[0] == 100_000
    statistics = postgresql_reads.gram_statistics()
    assert statistics.total == 301 and statistics.share("抹茶") == pytest.approx(300 / 301, abs=0.01)

    def read(term):
        candidates = Candidates([term], every=True, cap=100, matched=1, columns="p.sku")
        return candidates._plan(statistics, statistics.matches([term], every=True))[0]

    assert (read("抹茶"), read("方眼")) == ("walk", "index")
    with CaptureQueriesContext(connection) as queries:
        found = DatabaseSearch().search("抹茶", limit=20)
    assert len(found) == 20 and "merchant_short_grams" not in queries[-1]["sql"]
    notebook = Product.objects.get(sku="H").pk
    with CaptureQueriesContext(connection) as queries:
        assert DatabaseSearch().search("方眼", limit=20) == [notebook]
    assert "merchant_short_grams" in queries[-1]["sql"]


def test_migrations_keep_the_search_indexes():
    """A migration that rebuilds the product table (Django's AddField of a NOT NULL column does on SQLite) drops its
    triggers, and the FTS5 indexes silently stop following the catalogue: every trigger must still be there (on
    PostgreSQL, both GIN indexes)."""
    with connection.cursor() as cursor:
        if has_fts5(connection):
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'merchant_product'")
            indexes = {"merchant_product_fts", "merchant_product_grams"}
            expected = {f"{index}_{event}" for index in indexes for event in ("ai", "ad", "au")}
        else:
            gin = "SELECT indexname FROM pg_indexes WHERE tablename = 'merchant_product' AND indexdef LIKE '%%gin%%'"
            cursor.execute(gin)
            expected = {"merchant_product_search_key_trgm", "merchant_product_short_grams"}
        assert {name for (name,) in cursor.fetchall()} == expected
