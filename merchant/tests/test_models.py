"""The database refuses bad rows even when Python checks are bypassed."""

import pytest
from django.db import IntegrityError, transaction
from django.db.models import F

from merchant.models import InventoryMovement, Product

pytestmark = pytest.mark.django_db


def test_inventory_can_never_go_negative(catalogue):
    with pytest.raises(IntegrityError), transaction.atomic():
        Product.objects.filter(sku="MUGIBO-HOODIE").update(inventory_count=F("inventory_count") - 16)
    assert Product.objects.get(sku="MUGIBO-HOODIE").inventory_count == 15


def test_sku_is_unique_and_not_empty(catalogue):
    with pytest.raises(IntegrityError), transaction.atomic():
        Product.objects.create(sku="MUGIBO-CAL-2025", name="dup", price_cents=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Product.objects.create(sku="", name="blank", price_cents=1)


def test_movement_must_change_stock_and_leave_it_non_negative(catalogue):
    product = catalogue["MUGIBO-MUG"]
    for delta, balance in ((0, 1), (-1, -1)):
        with pytest.raises(IntegrityError), transaction.atomic():
            InventoryMovement.objects.create(product=product, delta=delta, reason="sale", balance_after=balance)


def test_search_key_follows_the_searchable_fields(catalogue):
    product = catalogue["MUGIBO-CAL-2025"]
    assert "むぎぼかれんだ2025" in product.search_key and "かわいい ぐっず" in product.search_key
    product.name = "ムギボー・ノート"
    product.save(update_fields=["name"])
    product.refresh_from_db()
    assert product.search_key.startswith("むぎぼのと")
