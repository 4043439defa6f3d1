"""Fixtures of the merchant tests: the seed catalogue and a loopback Meilisearch."""

from __future__ import annotations

import pytest

from merchant.catalog import seed_products
from merchant.models import Product

from .meili_fake import FakeMeilisearch


@pytest.fixture
def catalogue(db) -> dict[str, Product]:
    """The seed's products (むぎぼーカレンダー2025 …) by SKU, saved one by one (search keys, signals)."""
    products = {}
    for product in seed_products():
        product.save()
        products[product.sku] = product
    return products


@pytest.fixture
def meili(settings):
    """A running fake Meilisearch, and the settings pointing merchant at it."""
    fake = FakeMeilisearch().start()
    settings.MEILISEARCH_URL = fake.url
    settings.MEILISEARCH_MASTER_KEY = fake.master_key
    settings.MEILISEARCH_INDEX = "products"
    settings.MEILISEARCH_TIMEOUT_S = 0.5
    yield fake
    fake.stop()


@pytest.fixture
def indexed(meili, catalogue):
    """The catalogue pushed into the fake Meilisearch by a rebuild."""
    from merchant import meili as meili_module

    meili_module.rebuild()
    meili.requests.clear()
    return catalogue
