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


def test_short_terms_use_the_gram_index():
    Product.objects.create(sku="A", name="方眼ノート", price_cents=100, inventory_count=1)
    with CaptureQueriesContext(connection) as queries:
        assert DatabaseSearch().search("方眼", limit=20) == [Product.objects.get(sku="A").pk]
    sql = " ".join(q["sql"] for q in queries)
    expected = {"sqlite": "merchant_product_grams", "postgresql": "merchant_short_grams"}[connection.vendor]
    assert expected in sql


@pytest.fixture(params=["whole index", "bounded scan first"])
def budget(request, monkeypatch):
    """With a tiny candidate cap and scan budget, the bounded first scan decides often, not only the index."""
    if request.param == "bounded scan first":
        monkeypatch.setattr(search, "SHORT_SCAN_ROWS", 4)
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
    assert DatabaseSearch().search(text, limit=5) == DatabaseSearch(short_index=False).search(text, limit=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(words, min_size=1, max_size=12),
    query=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=4), min_size=1, max_size=3),
)
def test_indexed_terms_of_any_length_equal_the_scan(budget, monkeypatch, names, query):
    """Long terms too: the FTS5 trigram join (which stops at the cap) and the gram index find what a scan finds."""
    Product.objects.all().delete()
    for i, name in enumerate(names):
        Product.objects.create(sku=f"P{i}", name=name, price_cents=100, inventory_count=1 if i % 5 else 0)
    text = " ".join(query)
    indexed = DatabaseSearch().search(text, limit=5)
    with monkeypatch.context() as scan:
        scan.setattr(search, "sqlite_has_fts", lambda alias: False)
        scan.setattr(search, "sqlite_has_grams", lambda alias: False)
        assert indexed == DatabaseSearch(short_index=False).search(text, limit=5)
