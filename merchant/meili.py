"""Meilisearch through the official client: index settings, documents, search, sync and rebuild.

Document writes are asynchronous tasks in Meilisearch (202 + taskUid); sync after a commit does not
wait for them. The database stays the truth: search results are re-read from it, so a stale or
failed sync can only cost relevance, never show a wrong price or stock (see selectors).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import meilisearch
import requests
from django.conf import settings
from meilisearch.errors import MeilisearchError

from .models import Product
from .search_backend import SearchBackendError

logger = logging.getLogger(__name__)

SEARCHABLE_ATTRIBUTES = ["name", "description", "category", "brand", "keywords"]
INDEX_SETTINGS = {
    "searchableAttributes": SEARCHABLE_ATTRIBUTES,
    "filterableAttributes": ["active", "inventory_count", "category", "brand"],
    # Japanese segmentation for every searchable field (Meilisearch >= 1.10); queries send `locales`.
    "localizedAttributes": [{"attributePatterns": SEARCHABLE_ATTRIBUTES, "locales": ["jpn"]}],
}
IN_STOCK_FILTER = "active = true AND inventory_count > 0"
LOCALES = ["jpn"]
# Errors of the service or the wire, and answers that are not Meilisearch's shape.
FAILURES = (MeilisearchError, requests.RequestException, KeyError, TypeError, ValueError)


def client() -> meilisearch.Client:
    key = settings.MEILISEARCH_MASTER_KEY or None
    return meilisearch.Client(
        settings.MEILISEARCH_URL,
        key,
        timeout=settings.MEILISEARCH_TIMEOUT_S,  # type: ignore[arg-type]  # seconds, handed to requests: a float is fine
        # Without a key the client would send `Authorization: Bearer None`; requests drops a header set to None, and
        # the client hands these headers to every index and task it makes.
        custom_headers=None if key else {"Authorization": None},  # type: ignore[dict-item]
    )


def index():
    return client().index(settings.MEILISEARCH_INDEX)


def document(product: Product) -> dict:
    return {
        "id": product.pk,
        "sku": product.sku,
        "name": product.name,
        "description": product.description,
        "category": product.category,
        "brand": product.brand,
        "keywords": product.keyword_list,
        "inventory_count": product.inventory_count,
        "active": product.active,
    }


def search_ids(query: str, *, limit: int) -> list[int]:
    """Ids of in-stock products for `query`, best first. Raises SearchBackendError on any failure."""
    try:
        answer = index().search(
            query,
            {"limit": limit, "filter": IN_STOCK_FILTER, "locales": LOCALES, "attributesToRetrieve": ["id"]},
        )
        return [int(hit["id"]) for hit in answer["hits"]]
    except FAILURES as exc:
        raise SearchBackendError(f"Meilisearch search failed: {type(exc).__name__}: {exc}") from exc


def sync_products(ids: Iterable[int]) -> None:
    """Push the current state of these products (or their deletion) to the index. Never raises.

    Called after commit: a failure is logged and left for `manage.py search_index rebuild`.
    """
    ids = sorted(set(ids))
    if not ids or not settings.MEILISEARCH_URL:
        return
    try:
        products = list(Product.objects.filter(pk__in=ids))
        idx = index()
        if products:
            idx.add_documents([document(p) for p in products], primary_key="id")
        for gone in sorted(set(ids) - {p.pk for p in products}):
            idx.delete_document(gone)
    except FAILURES:
        logger.exception("Meilisearch sync of products %s failed; run `manage.py search_index rebuild`", ids[:20])


def rebuild(*, batch_size: int = 1000, progress: Callable[[int], None] | None = None) -> int:
    """Recreate the index from the database: settings, then every product in batches. Returns the count.

    Raises MeilisearchError / requests errors to the caller (the management command reports them).
    """
    c = client()
    idx = c.index(settings.MEILISEARCH_INDEX)
    try:
        c.get_index(settings.MEILISEARCH_INDEX)
    except meilisearch.errors.MeilisearchApiError as exc:
        if exc.code != "index_not_found":
            raise
        c.wait_for_task(c.create_index(settings.MEILISEARCH_INDEX, {"primaryKey": "id"}).task_uid)
    idx.update_settings(INDEX_SETTINGS)
    idx.delete_all_documents()
    total, last_task = 0, None
    batch: list[dict] = []
    for product in Product.objects.order_by("pk").iterator(chunk_size=batch_size):
        batch.append(document(product))
        if len(batch) >= batch_size:
            last_task = idx.add_documents(batch, primary_key="id")
            total += len(batch)
            if progress:
                progress(len(batch))
            batch = []
    if batch:
        last_task = idx.add_documents(batch, primary_key="id")
        total += len(batch)
        if progress:
            progress(len(batch))
    if last_task is not None:
        # Tasks run in order, so the last one finishing means the index is complete.
        task = c.wait_for_task(last_task.task_uid, timeout_in_ms=600_000)
        if task.status != "succeeded":
            raise SearchBackendError(f"Meilisearch task {task.uid} ended {task.status}: {task.error}")
    return total
