"""The embedded database search and the seed's fallbacks, with constant query counts."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from merchant.catalog import synthetic_products
from merchant.models import Product
from merchant.selectors import inventory_counts, product_search

pytestmark = pytest.mark.django_db


def names(result):
    return [p.name for p in result.products]


@pytest.mark.parametrize(
    ("keywords", "expected_first", "expected_all"),
    [
        (["むぎぼー"], "むぎぼーカレンダー2025", {"むぎぼーマグカップ", "むぎぼートートバッグ", "むぎぼーパーカー"}),
        (["ﾑｷﾞﾎﾞｰ"], "むぎぼーカレンダー2025", {"むぎぼーマグカップ", "むぎぼーステッカーセット"}),
        (["カレンダ"], None, {"むぎぼーカレンダー2025", "シンプル卓上カレンダー2025"}),
        (["むぎぼー", "カレンダー"], "むぎぼーカレンダー2025", set()),
        (
            ["かわいい", "グッズ"],
            None,
            {"むぎぼーカレンダー2025", "むぎぼーマグカップ", "むぎぼーアクリルキーホルダー"},
        ),
    ],
)
def test_japanese_queries_find_the_right_products(catalogue, keywords, expected_first, expected_all):
    result = product_search(keywords=keywords, limit=20)
    assert result.backend == "database" and result.fallback == []
    if expected_first:
        assert names(result)[0] == expected_first
    assert expected_all <= set(names(result))


def test_calendar_query_finds_only_calendars(catalogue):
    assert set(names(product_search(keywords=["カレンダ"], limit=20))) == {
        "むぎぼーカレンダー2025",
        "シンプル卓上カレンダー2025",
    }


def test_cute_goods_skip_other_products(catalogue):
    found = set(names(product_search(keywords=["かわいい", "グッズ"], limit=20)))
    assert "A5方眼ノート" not in found and "ドリップコーヒー10袋セット" not in found


def test_out_of_stock_and_inactive_products_are_skipped(catalogue):
    found = names(product_search(keywords=["むぎぼー"], limit=20))
    assert "むぎぼーぬいぐるみ（S）" not in found  # inventory 0
    assert "むぎぼーポスター2024" not in found  # inactive


def test_short_terms_use_a_scan(catalogue):
    # 2 characters after normalisation: below the trigram minimum.
    assert "ベーシックTシャツ（白）" in names(product_search(keywords=["Tシャツ"], limit=20))
    assert names(product_search(keywords=["方眼"], limit=20)) == ["A5方眼ノート"]


def test_short_terms_rank_candidates_of_long_terms(catalogue):
    assert names(product_search(keywords=["カレンダー", "卓上"], limit=20))[0] == "シンプル卓上カレンダー2025"


def test_no_hits_fall_back_to_all_in_stock(catalogue):
    result = product_search(keywords=["存在しない商品名"], limit=5)
    assert result.backend == "all_in_stock" and result.fallback == ["no_hits"]
    assert names(result)[0] == "むぎぼーカレンダー2025"
    assert len(result.products) == 5
    assert all(p.inventory_count > 0 and p.active for p in result.products)


@pytest.mark.parametrize("keywords", [[], [""], ["  ", ""]])
def test_empty_keywords_list_all_in_stock_products(catalogue, keywords):
    result = product_search(keywords=keywords, limit=100)
    assert result.backend == "all_in_stock" and result.fallback == []
    assert len(result.products) == Product.objects.filter(active=True, inventory_count__gt=0).count()


def test_fts_special_characters_are_plain_text(catalogue):
    for query in ['"むぎ', "OR AND NOT", "むぎ* ^", "a:b (c)"]:
        product_search(keywords=[query], limit=5)  # never an FTS syntax error


@pytest.mark.parametrize(
    ("keywords", "holdings"), [(["カレンダー"], 1), (["カレンダー", "2025"], 2), (["かわいい", "抹茶"], 2)]
)
def test_query_count_is_constant_however_many_hits(catalogue, keywords, holdings):
    """One query per candidate tier (every term, then some): never one per hit."""
    Product.objects.bulk_create(list(synthetic_products(2000)))
    product_search(keywords=keywords, limit=1)  # warm the FTS-table check
    most = holdings
    counts = []
    for limit in (1, 100):
        with CaptureQueriesContext(connection) as queries:
            result = product_search(keywords=keywords, limit=limit)
        counts.append(len(queries))
        assert len(result.products) == limit
    assert counts[0] <= most and counts[1] <= most


def test_inventory_counts_unknown_ids_are_zero(catalogue, django_assert_num_queries):
    cal, plush = catalogue["MUGIBO-CAL-2025"], catalogue["MUGIBO-PLUSH-S"]
    with django_assert_num_queries(1):
        assert inventory_counts(product_ids=[cal.pk, plush.pk, 999999]) == {cal.pk: 50, plush.pk: 0, 999999: 0}
