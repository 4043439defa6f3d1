"""Terms of one or two characters go through the gram index (migration 0002), with the scan's results."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from merchant import search
from merchant.models import Product
from merchant.search import DatabaseSearch
from merchant.search_keys import gram_tokens, short_grams

pytestmark = pytest.mark.django_db

# A small alphabet (kana, kanji, Latin, punctuation, a space), so short terms hit often and collide.
ALPHABET = "方眼抹茶ぼむぎーカレンダａBc-・ 　!"
words = st.text(alphabet=ALPHABET, min_size=1, max_size=12)


def test_grams_are_every_short_substring_without_whitespace():
    assert short_grams("方眼 ノ") == ["方", "眼", "ノ", "方眼"]
    assert gram_tokens("方眼") == "g65b9 g773c g65b9x773c"


def test_short_terms_use_the_gram_index(monkeypatch):
    monkeypatch.setattr(search, "PROBE_ROWS", 1)  # PostgreSQL: the probe scans the first product only
    Product.objects.create(sku="B", name="無地ノート", price_cents=100, inventory_count=1)
    Product.objects.create(sku="A", name="方眼ノート", price_cents=100, inventory_count=1)
    with CaptureQueriesContext(connection) as queries:
        assert DatabaseSearch().search("方眼", limit=20) == [Product.objects.get(sku="A").pk]
    sql = " ".join(q["sql"] for q in queries)
    expected = {"sqlite": "merchant_product_grams", "postgresql": "merchant_short_grams"}[connection.vendor]
    assert expected in sql


@pytest.fixture(params=["whole index", "tiny cap and probe"])
def budget(request, monkeypatch):
    """With a tiny candidate cap and PostgreSQL's probe of four rows, the cap is reached often and the probe decides
    often, not only the index."""
    if request.param == "tiny cap and probe":
        monkeypatch.setattr(search, "PROBE_ROWS", 4)
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


def test_migrations_keep_the_search_indexes():
    """A migration that rebuilds the product table (Django's AddField of a NOT NULL column does on SQLite) drops its
    triggers, and the FTS5 indexes silently stop following the catalogue: every trigger must still be there (on
    PostgreSQL, both GIN indexes)."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'merchant_product'")
            indexes = {"merchant_product_fts", "merchant_product_grams"}
            expected = {f"{index}_{event}" for index in indexes for event in ("ai", "ad", "au")}
        else:
            gin = "SELECT indexname FROM pg_indexes WHERE tablename = 'merchant_product' AND indexdef LIKE '%%gin%%'"
            cursor.execute(gin)
            expected = {"merchant_product_search_key_trgm", "merchant_product_short_grams"}
        assert {name for (name,) in cursor.fetchall()} == expected
