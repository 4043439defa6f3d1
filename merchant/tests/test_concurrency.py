"""Concurrent sales never take stock below zero (PostgreSQL, threads released together)."""

import pytest
from django.db import connection

from mcpsite.core.errors import Conflict
from mcpsite.tests.concurrency import run_together
from merchant import services
from merchant.models import InventoryMovement, Product

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 8
STOCK = 3


def sell_concurrently(product_id: int) -> tuple[list[str], list[BaseException]]:
    def sell(_n):
        try:
            services.inventory_adjust(product_id=product_id, delta=-1, reason="sale")
        except Conflict:
            return "refused"
        return "sold"

    return run_together(sell, THREADS)


def test_concurrent_sales_never_oversell():
    product = Product.objects.create(sku="RACE-1", name="race", price_cents=100, inventory_count=STOCK)
    outcomes, errors = sell_concurrently(product.pk)
    assert errors == []
    assert outcomes.count("sold") == STOCK and outcomes.count("refused") == THREADS - STOCK
    assert Product.objects.get(pk=product.pk).inventory_count == 0
    assert InventoryMovement.objects.filter(product=product).count() == STOCK
    assert list(
        InventoryMovement.objects.filter(product=product)
        .order_by("balance_after")
        .values_list("balance_after", flat=True)
    ) == [0, 1, 2]


def test_control_without_the_guard_and_constraint_the_race_oversells(monkeypatch):
    """Switch off the conditional UPDATE and drop the CHECK: the same race now takes stock below zero."""
    product = Product.objects.create(sku="RACE-2", name="race", price_cents=100, inventory_count=STOCK)
    monkeypatch.setattr(services, "_enough_stock", lambda rows, delta: rows)
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE merchant_product DROP CONSTRAINT merchant_product_inventory_not_negative")
        cursor.execute("ALTER TABLE merchant_inventorymovement DROP CONSTRAINT merchant_movement_balance_not_negative")
    try:
        outcomes, errors = sell_concurrently(product.pk)
        assert errors == []
        assert outcomes.count("sold") == THREADS
        assert Product.objects.get(pk=product.pk).inventory_count == STOCK - THREADS  # oversold
    finally:
        Product.objects.filter(pk=product.pk).delete()
        with connection.cursor() as cursor:
            cursor.execute(
                "ALTER TABLE merchant_product ADD CONSTRAINT merchant_product_inventory_not_negative "
                "CHECK (inventory_count >= 0)"
            )
            cursor.execute(
                "ALTER TABLE merchant_inventorymovement ADD CONSTRAINT "
                "merchant_movement_balance_not_negative CHECK (balance_after >= 0)"
            )


def test_constraint_alone_refuses_an_oversell_that_bypasses_the_guard(monkeypatch):
    """With only the guard switched off, the CHECK constraint still refuses every sale below zero."""
    product = Product.objects.create(sku="RACE-3", name="race", price_cents=100, inventory_count=STOCK)
    monkeypatch.setattr(services, "_enough_stock", lambda rows, delta: rows)
    outcomes, errors = sell_concurrently(product.pk)
    assert outcomes.count("sold") == STOCK
    assert len(errors) == THREADS - STOCK  # IntegrityError from the database
    assert Product.objects.get(pk=product.pk).inventory_count == 0


def test_trigram_extension_handles_japanese():
    from merchant.checks import check_trigram_ctype

    with connection.cursor() as cursor:
        cursor.execute("SELECT show_trgm('東京')")
        assert cursor.fetchone()[0]
    assert check_trigram_ctype(databases=["default"]) == []
