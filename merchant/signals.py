"""Keep the Meilisearch index in step with the catalogue, after each commit (never inside it)."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from .models import Product


def sync_after_commit(ids: Iterable[int]) -> None:
    """Push these products to Meilisearch once the surrounding transaction commits (no-op without it)."""
    if not settings.MEILISEARCH_URL:
        return
    ids = list(ids)

    def push():
        from . import meili

        meili.sync_products(ids)

    # robust: a failed sync must never turn a committed write into an error for the caller.
    transaction.on_commit(push, robust=True)


@receiver(post_save, sender=Product, dispatch_uid="merchant_product_saved")
def product_saved(sender, instance: Product, raw: bool = False, **kwargs) -> None:
    if not raw:
        sync_after_commit([instance.pk])


@receiver(post_delete, sender=Product, dispatch_uid="merchant_product_deleted")
def product_deleted(sender, instance: Product, **kwargs) -> None:
    sync_after_commit([instance.pk])
