"""Reads of the catalogue. Each runs a fixed number of queries, however many rows it returns."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Case, CharField, Count, Q, Sum, When
from django.db.models.functions import Cast, TruncDate
from django.utils import timezone
from django.utils.translation import gettext

from mcpsite.core.search import SearchHit, SearchQuery

from .models import InventoryMovement, Product
from .search import DatabaseSearch, get_backend
from .search_backend import SearchBackendError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchResult:
    """The products found and how: `backend` that produced them and the `fallback` steps taken.

    fallback: [] normally; "backend_error" when the search service failed and the database search
    answered instead; "no_hits" when nothing matched and all in-stock products are listed (the seed's
    rule). `backend` is "meilisearch", "database", or "all_in_stock" (the listing).
    """

    query: str
    products: list[Product]
    backend: str
    fallback: list[str] = field(default_factory=list)


def product_list_in_stock(*, limit: int) -> list[Product]:
    """The seed's "all products" listing: active, in stock, oldest first."""
    return list(Product.objects.in_stock().order_by("id")[:limit])


def products_matching(*, query: str, limit: int) -> list[Product]:
    """In-stock products matching `query` with search_products' 表記揺れ tolerance (the database search, never the
    remote engine: completion answers while the user types); the first in-stock products when `query` is blank."""
    if not query.strip():
        return product_list_in_stock(limit=limit)
    return DatabaseSearch().products(search_query(keywords=[query]), limit=limit)


def product_ids_starting(*, digits: str, limit: int) -> list[int]:
    """Ids of in-stock products whose id starts with `digits`, in id order."""
    products = Product.objects.in_stock().annotate(id_text=Cast("id", CharField())).filter(id_text__startswith=digits)
    return list(products.order_by("id").values_list("id", flat=True)[:limit])


def product_get(*, product_id: int) -> Product | None:
    return Product.objects.filter(pk=product_id).first()


def search_query(*, keywords: Iterable[str]) -> str:
    """The seed's query: keywords joined by one space (blank keywords dropped; none -> "")."""
    return " ".join(k.strip() for k in keywords if k and k.strip())


def product_search(*, keywords: list[str], limit: int) -> SearchResult:
    """Search in-stock products with the configured backend and the seed's fallbacks.

    Empty keywords list all in-stock products (the seed's 全商品取得). A failing search service is
    logged and the database search answers; no hits list all in-stock products. The database is
    re-read for every hit, so stock and prices are always current.
    """
    query = search_query(keywords=keywords)
    if not query:
        return SearchResult(query, product_list_in_stock(limit=limit), "all_in_stock")
    backend, fallback = get_backend(), []
    try:
        products = backend.products(query, limit=limit)
    except SearchBackendError as exc:
        logger.warning("Search backend %s failed, falling back to the database search: %s", backend.name, exc)
        fallback.append("backend_error")
        backend = DatabaseSearch()
        products = backend.products(query, limit=limit)
    if not products:
        fallback.append("no_hits")
        return SearchResult(query, product_list_in_stock(limit=limit), "all_in_stock", fallback)
    return SearchResult(query, products[:limit], backend.name, fallback)


def inventory_counts(*, product_ids: list[int]) -> dict[int, int]:
    """Stock per requested id; unknown ids count 0 (the seed's rule), and so do inactive products, which are not for
    sale (`products_for_cart` refuses them): no id is reported in stock that a cart cannot hold. One query."""
    found = dict(Product.objects.filter(pk__in=set(product_ids), active=True).values_list("pk", "inventory_count"))
    return {pk: found.get(pk, 0) for pk in product_ids}


def products_for_cart(*, product_ids: Iterable[int]) -> dict[int, Product]:
    """Active products by id (inactive ones are not for sale). One query."""
    return Product.objects.filter(active=True).in_bulk(set(product_ids))


# --- the staff dashboard ----------------------------------------------------------------------

LOW_STOCK = 10  # at or below this many units a product is "low" (the admin's stock filter and the dashboard)


@dataclass(frozen=True)
class LowStock:
    out_of_stock: int  # active products with none left
    low: int  # active products with 1…LOW_STOCK left
    products: list[Product]  # the `limit` active products with the least stock


def product_low_stock(*, limit: int) -> LowStock:
    """Active products at or below LOW_STOCK, fewest first: two queries however many products there are."""
    low = Product.objects.filter(active=True, inventory_count__lte=LOW_STOCK)
    counts = low.aggregate(
        out=Count("id", filter=Q(inventory_count=0)), low=Count("id", filter=Q(inventory_count__gt=0))
    )
    return LowStock(counts["out"], counts["low"], list(low.order_by("inventory_count", "sku")[:limit]))


def sales_units_by_day(*, since: datetime.datetime, until: datetime.datetime) -> dict[datetime.date, int]:
    """Units sold in [since, until) per local day (the stock movements recorded as sales); one GROUP BY query,
    days without sales absent."""
    rows = (
        InventoryMovement.objects.filter(
            reason=InventoryMovement.Reason.SALE, created_at__gte=since, created_at__lt=until
        )
        .annotate(day=TruncDate("created_at", tzinfo=timezone.get_current_timezone()))
        .order_by()
        .values("day")
        .annotate(units=Sum("delta"))
        .values_list("day", "units")
    )
    return {day: -units for day, units in rows}  # a sale's delta is negative


# --- the staff's search (mcpsite/staff_search.py) ----------------------------------------------------------------


def product_staff_search(*, query: SearchQuery, limit: int) -> list[SearchHit]:
    """Products (active or not) whose SKU is the query, or whose folded key (name, description, category, brand,
    keywords: merchant's search key) holds every term; by SKU match, then id."""
    sku = Q(sku__in={query.text, query.text.upper()})
    rows = (
        Product.objects.filter(sku | query.key_holds("search_key"))
        .annotate(by_sku=Case(When(sku, then=0), default=1))
        .order_by("by_sku", "id")
        .only("id", "sku", "name", "active")
    )
    return [SearchHit(p.pk, p.name, p.sku if p.active else f"{p.sku} ({gettext('inactive')})") for p in rows[:limit]]
