"""Writes to the catalogue: stock movements. Stock can never go negative (constraint + conditional update)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import connection, transaction
from django.db.models import F, QuerySet
from django.utils.translation import gettext_noop

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.contrib.auth.models import User

from mcpsite.core.db import durable_write, has_fts5, has_trigram_indexes
from mcpsite.core.errors import Conflict, InvalidParams, Message, NotFound

from . import sql
from .models import InventoryMovement, Product
from .signals import sync_after_commit
from .sql.sqlite import sqlite_has_fts


def _enough_stock(rows: QuerySet[Product], delta: int) -> QuerySet[Product]:
    """The guard of a decrement: only rows that still hold enough stock are updated."""
    return rows.filter(inventory_count__gte=-delta) if delta < 0 else rows


@durable_write
def inventory_adjust(
    *, product_id: int, delta: int, reason: str, note: str = "", actor: User | None = None
) -> InventoryMovement:
    """Add `delta` (negative for a sale) to a product's stock and record the movement.

    The decrement is one conditional UPDATE (`inventory_count >= -delta`), so concurrent sales can
    never take stock below zero: the loser of a race updates no row and gets a Conflict.
    """
    if delta == 0:
        raise InvalidParams(Message(gettext_noop("The adjustment must change the stock (delta 0)")))
    if reason not in InventoryMovement.Reason.values:
        raise InvalidParams(f"Unknown reason {reason!r}; expected one of {InventoryMovement.Reason.values}")
    rows = _enough_stock(Product.objects.filter(pk=product_id), delta)
    if not rows.update(inventory_count=F("inventory_count") + delta):
        available = Product.objects.filter(pk=product_id).values_list("inventory_count", flat=True).first()
        if available is None:
            raise NotFound(f"Product {product_id} does not exist")
        raise Conflict(
            Message(
                gettext_noop("Only %(available)s in stock; cannot take %(requested)s"),
                available=available,
                requested=-delta,
            ),
            data={"product_id": product_id, "requested": -delta, "available": available},
        )
    balance = Product.objects.filter(pk=product_id).values_list("inventory_count", flat=True).get()
    movement = InventoryMovement.objects.create(
        product_id=product_id, delta=delta, reason=reason, balance_after=balance, note=note, created_by=actor
    )
    sync_after_commit([product_id])
    return movement


@durable_write
def inventory_set(
    *, product_id: int, count: int, note: str = "", actor: User | None = None
) -> InventoryMovement | None:
    """Set a product's stock to a counted figure (a stocktake correction), recording the difference.

    Returns None when the count is unchanged.
    """
    if count < 0:
        raise InvalidParams(Message(gettext_noop("Stock cannot be negative")))
    # Locks the product row so a sale between our read and our write cannot be overwritten unseen.
    product = Product.objects.select_for_update().filter(pk=product_id).first()
    if product is None:
        raise NotFound(f"Product {product_id} does not exist")
    delta = count - product.inventory_count
    if delta == 0:
        return None
    Product.objects.filter(pk=product_id).update(inventory_count=count)
    movement = InventoryMovement.objects.create(
        product_id=product_id,
        delta=delta,
        reason=InventoryMovement.Reason.CORRECTION,
        balance_after=count,
        note=note,
        created_by=actor,
    )
    sync_after_commit([product_id])
    return movement


def search_keys_rebuild(*, batch_size: int = 1000, progress: Callable[[int], object] | None = None) -> int:
    """Recompute every product's search key (after a change of normalisation) and the FTS index.

    Batches commit one by one: a long rebuild never holds the database for its whole run.
    """
    count = 0
    last_pk = 0
    while True:
        with transaction.atomic():
            batch = list(Product.objects.filter(pk__gt=last_pk).order_by("pk")[:batch_size])
            if not batch:
                break
            for product in batch:
                product.search_keys_refresh()
            Product.objects.bulk_update(batch, Product.SEARCH_KEY_FIELDS)
        last_pk = batch[-1].pk
        count += len(batch)
        if progress:
            progress(len(batch))
    if has_fts5(connection) and sqlite_has_fts(connection.alias):
        sql.fts_rebuild()
    search_statistics_refresh()
    return count


def search_statistics_refresh() -> None:
    """After a bulk write of products (seed_merchant --scale, search_keys_rebuild), on PostgreSQL: gather the
    statistics that choose each search's read (`sql.postgresql`), and move the GIN indexes' pending entries into
    the indexes, where a search would otherwise read them all (168 pages of pg_trgm's after seeding 100,000
    products). Autovacuum does both in time; searches right after a bulk load should not wait for it."""
    if has_trigram_indexes(connection):
        sql.statistics_refresh()
