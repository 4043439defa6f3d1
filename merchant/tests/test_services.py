"""Stock movements: conditional decrements, corrections, the recorded history."""

import pytest

from mcpsite.core.errors import Conflict, InvalidParams, NotFound
from merchant.models import InventoryMovement, Product
from merchant.services import inventory_adjust, inventory_set, search_keys_rebuild

pytestmark = pytest.mark.django_db(transaction=True)


def stock(sku):
    return Product.objects.get(sku=sku).inventory_count


def test_sale_and_restock_are_recorded(catalogue, user):
    hoodie = catalogue["MUGIBO-HOODIE"]
    sale = inventory_adjust(product_id=hoodie.pk, delta=-5, reason="sale", actor=user, note="店頭")
    restock = inventory_adjust(product_id=hoodie.pk, delta=20, reason="restock")
    assert stock("MUGIBO-HOODIE") == 30
    assert (sale.delta, sale.balance_after, sale.created_by, sale.note) == (-5, 10, user, "店頭")
    assert (restock.delta, restock.balance_after) == (20, 30)


def test_selling_more_than_stock_is_refused_and_changes_nothing(catalogue):
    hoodie = catalogue["MUGIBO-HOODIE"]
    with pytest.raises(Conflict) as exc:
        inventory_adjust(product_id=hoodie.pk, delta=-16, reason="sale")
    assert exc.value.data == {"product_id": hoodie.pk, "requested": 16, "available": 15}
    assert stock("MUGIBO-HOODIE") == 15 and not InventoryMovement.objects.exists()


def test_bad_adjustments(catalogue):
    with pytest.raises(NotFound):
        inventory_adjust(product_id=999999, delta=-1, reason="sale")
    with pytest.raises(InvalidParams):
        inventory_adjust(product_id=catalogue["MUGIBO-MUG"].pk, delta=0, reason="sale")
    with pytest.raises(InvalidParams):
        inventory_adjust(product_id=catalogue["MUGIBO-MUG"].pk, delta=1, reason="gift")


def test_correction_records_the_difference(catalogue):
    mug = catalogue["MUGIBO-MUG"]
    movement = inventory_set(product_id=mug.pk, count=27, note="棚卸し")
    assert (movement.delta, movement.balance_after, movement.reason) == (-3, 27, "correction")
    assert inventory_set(product_id=mug.pk, count=27) is None
    with pytest.raises(InvalidParams):
        inventory_set(product_id=mug.pk, count=-1)


def test_search_keys_rebuild_recomputes_every_key(catalogue):
    Product.objects.update(search_key="")
    assert search_keys_rebuild(batch_size=5) == len(catalogue)
    from merchant.selectors import product_search

    assert product_search(keywords=["ﾑｷﾞﾎﾞｰ"], limit=1).products[0].sku == "MUGIBO-CAL-2025"
