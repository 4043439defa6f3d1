"""The Meilisearch backend: the official client against a loopback fake; sync, rebuild, fallbacks."""

import pytest
from django.core.management import call_command

from merchant import meili as meili_module
from merchant.models import Product
from merchant.search_backend import SearchBackendError
from merchant.selectors import product_search
from merchant.services import inventory_adjust

pytestmark = pytest.mark.django_db


def calls(fake, method, suffix):
    return [r for r in fake.requests if r["method"] == method and r["path"].endswith(suffix)]


def names(result):
    return [p.name for p in result.products]


def test_rebuild_configures_japanese_and_loads_every_product(meili, catalogue):
    assert meili_module.rebuild(batch_size=5) == len(catalogue)
    index = meili.indexes["products"]
    assert index["primaryKey"] == "id"
    assert index["settings"]["searchableAttributes"] == ["name", "description", "category", "brand", "keywords"]
    assert index["settings"]["localizedAttributes"] == [
        {"attributePatterns": ["name", "description", "category", "brand", "keywords"], "locales": ["jpn"]}
    ]
    assert len(index["documents"]) == len(catalogue)
    assert len(calls(meili, "POST", "/documents")) == 3  # 12 products in batches of 5
    cal = index["documents"][catalogue["MUGIBO-CAL-2025"].pk]
    assert cal["keywords"] == ["かわいい", "グッズ", "カレンダー", "2025", "壁掛け"]
    assert all(r["authorization"] == "Bearer test-master-key" for r in meili.requests)


@pytest.mark.parametrize(
    ("keywords", "expected"),
    [
        (["かわいい", "グッズ"], {"むぎぼーカレンダー2025", "むぎぼーマグカップ", "むぎぼーアクリルキーホルダー"}),
        (["むぎぼー"], {"むぎぼーカレンダー2025", "むぎぼーパーカー"}),
        (["ﾑｷﾞﾎﾞｰ"], {"むぎぼーカレンダー2025", "むぎぼーパーカー"}),
        (["カレンダ"], {"むぎぼーカレンダー2025", "シンプル卓上カレンダー2025"}),
    ],
)
def test_japanese_queries_through_meilisearch(indexed, meili, keywords, expected):
    result = product_search(keywords=keywords, limit=20)
    assert result.backend == "meilisearch" and result.fallback == []
    assert expected <= set(names(result))
    assert "むぎぼーぬいぐるみ（S）" not in names(result)  # out of stock
    (search,) = calls(meili, "POST", "/indexes/products/search")
    assert search["body"]["q"] == " ".join(keywords)  # the seed: keywords joined by a space
    assert search["body"]["locales"] == ["jpn"]
    assert search["body"]["filter"] == "active = true AND inventory_count > 0"
    assert search["body"]["limit"] == 20


def test_hits_are_reread_from_the_database(indexed, meili):
    # The index still says 50 in stock, the database says 0: the database wins.
    Product.objects.filter(sku="MUGIBO-CAL-2025").update(inventory_count=0)
    assert "むぎぼーカレンダー2025" not in names(product_search(keywords=["カレンダー"], limit=20))


def test_meilisearch_no_hits_lists_all_in_stock(indexed, meili):
    result = product_search(keywords=["存在しない"], limit=3)
    assert (result.backend, result.fallback, len(result.products)) == ("all_in_stock", ["no_hits"], 3)


@pytest.mark.parametrize("mode", ["error", "slow", "garbage", "down"])
def test_failing_meilisearch_falls_back_to_the_database(indexed, meili, mode, caplog):
    if mode == "down":
        meili.stop()
    else:
        meili.mode = mode
    result = product_search(keywords=["むぎぼー", "カレンダー"], limit=5)
    assert result.backend == "database" and result.fallback == ["backend_error"]
    assert names(result)[0] == "むぎぼーカレンダー2025"
    assert "falling back" in caplog.text


def test_failing_meilisearch_and_no_database_hits_lists_all(indexed, meili):
    meili.mode = "error"
    result = product_search(keywords=["存在しない"], limit=2)
    assert result.backend == "all_in_stock" and result.fallback == ["backend_error", "no_hits"]


def test_saves_and_deletes_sync_after_commit(meili, catalogue, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        product = Product.objects.create(sku="NEW-1", name="むぎぼー手ぬぐい", price_cents=90000, inventory_count=3)
    assert meili.indexes["products"]["documents"][product.pk]["name"] == "むぎぼー手ぬぐい"
    with django_capture_on_commit_callbacks(execute=True):
        product.name = "むぎぼー手拭い"
        product.save()
    assert meili.indexes["products"]["documents"][product.pk]["name"] == "むぎぼー手拭い"
    pk = product.pk
    with django_capture_on_commit_callbacks(execute=True):
        product.delete()
    assert pk not in meili.indexes["products"]["documents"]


def test_nothing_is_sent_before_commit(meili, catalogue, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        Product.objects.create(sku="NEW-2", name="x", price_cents=100, inventory_count=1)
    assert callbacks and meili.requests == []


def test_stock_changes_sync_inventory(indexed, meili, django_capture_on_commit_callbacks):
    hoodie = indexed["MUGIBO-HOODIE"]
    with django_capture_on_commit_callbacks(execute=True):
        inventory_adjust(product_id=hoodie.pk, delta=-15, reason="sale")
    assert meili.indexes["products"]["documents"][hoodie.pk]["inventory_count"] == 0


def test_failed_sync_is_logged_not_raised(meili, catalogue, django_capture_on_commit_callbacks, caplog):
    meili.mode = "error"
    with django_capture_on_commit_callbacks(execute=True):
        Product.objects.create(sku="NEW-3", name="y", price_cents=100, inventory_count=1)
    assert "search_index rebuild" in caplog.text


def test_rebuild_command_reports_progress_and_failure(meili, catalogue, capsys):
    call_command("search_index", "rebuild")
    assert f"Indexed {len(catalogue)} products" in capsys.readouterr().out
    meili.mode = "error"
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="rebuild failed"):
        call_command("search_index", "rebuild", verbosity=0)


def test_search_ids_raises_backend_error(meili):
    meili.mode = "error"
    with pytest.raises(SearchBackendError, match="Meilisearch search failed"):
        meili_module.search_ids("x", limit=1)


def test_without_a_key_no_authorization_header_is_sent(settings, catalogue):
    """A Meilisearch started without a master key; MEILISEARCH_MASTER_KEY left empty. The client used to send
    `Authorization: Bearer None`, which a keyed Meilisearch refuses (every search then fell back quietly)."""
    from .meili_fake import FakeMeilisearch

    fake = FakeMeilisearch(master_key=None).start()
    try:
        settings.MEILISEARCH_URL, settings.MEILISEARCH_MASTER_KEY = fake.url, ""
        meili_module.rebuild()
        result = product_search(keywords=["むぎぼー"], limit=5)
        assert result.backend == "meilisearch" and result.fallback == []
        assert fake.requests and {r["authorization"] for r in fake.requests} == {None}
    finally:
        fake.stop()
