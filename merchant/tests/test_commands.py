"""seed_merchant is idempotent; --scale adds generated products with their search keys."""

import pytest
from django.core.management import call_command
from django.db import connection

from merchant.models import Product
from merchant.selectors import product_search

pytestmark = pytest.mark.django_db


def test_seed_is_idempotent_and_scales(capsys):
    call_command("seed_merchant", "--scale", "300", verbosity=0)
    call_command("seed_merchant", "--scale", "300", verbosity=0)
    assert Product.objects.count() == 12 + 300
    cal = Product.objects.get(sku="MUGIBO-CAL-2025")
    assert (cal.name, cal.price_cents, cal.inventory_count) == ("むぎぼーカレンダー2025", 198000, 50)
    generated = Product.objects.get(sku="GEN-000007")
    search_key, name_key = generated.search_key, generated.name_key
    generated.search_keys_refresh()
    assert (search_key, name_key) == (generated.search_key, generated.name_key) != ("", "")
    assert product_search(keywords=["マグカップ"], limit=5).backend == "database"


def test_database_rebuild_without_meilisearch(capsys, catalogue):
    call_command("search_index", "rebuild", verbosity=0)
    assert f"Indexed {len(catalogue)} products into the database search index" in capsys.readouterr().out


@pytest.mark.postgres
def test_bulk_seed_leaves_postgresql_ready_to_search():
    """The statistics that choose each search's read are gathered, and no GIN entry is left pending (a search reads
    every pending one)."""
    call_command("seed_merchant", "--scale", "300", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'merchant_product_short_grams'")
        assert cursor.fetchone()[0] == 1
        cursor.execute(
            "SELECT gin_clean_pending_list('merchant_product_search_key_trgm'::regclass), "
            "gin_clean_pending_list('merchant_product_short_grams'::regclass)"
        )
        assert cursor.fetchone() == (0, 0)
