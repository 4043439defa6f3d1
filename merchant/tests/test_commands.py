"""seed_merchant is idempotent; --scale adds generated products with their search keys."""

import pytest
from django.core.management import call_command

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
