"""MCP resources of the merchant group: one product by id (as search_products shows it), and the cart review view."""

from __future__ import annotations

from pathlib import Path

from mcpsite.core.errors import NotFound
from mcpsite.core.jsonutil import dumps
from mcpsite.mcp.registry import CallContext
from mcpsite.mcp.resources import resource_template
from mcpsite.mcp.ui import view

from . import selectors
from .tools import CART_REVIEW, product_row

GROUP = "merchant"
COMPLETIONS = 20


def complete_product_id(value: str, context: dict[str, str], ctx: CallContext) -> list[str]:
    """Ids of in-stock products: those starting with the typed digits, or those whose name matches the typed text."""
    value = value.strip()
    if value.isdigit():
        return [str(pk) for pk in selectors.product_ids_starting(digits=value, limit=COMPLETIONS)]
    return [str(p.pk) for p in selectors.products_matching(query=value, limit=COMPLETIONS)]


@resource_template(
    uri_template="mcpsite://merchant/products/{product_id}",
    name="product",
    title="商品",
    description="商品 1 件 (id, sku, name, description, price_cents, price_jpy, inventory_count, category, brand, "
    "image_url, refund_period_days)。search_products の 1 行と同じ形。",
    complete={"product_id": complete_product_id},
)
def product(variables: dict[str, str], ctx: CallContext) -> str:
    raw = variables["product_id"]
    found = selectors.product_get(product_id=int(raw)) if raw.isdigit() and len(raw) <= 18 else None
    if found is None:
        raise NotFound(data=f"Product {raw} not found")
    return dumps(product_row(found))


view(
    uri=CART_REVIEW,
    group=GROUP,
    name="cart-review",
    title="カートの確認 / Cart review",
    description=(
        "MCP Apps view of build_cart_mandates: the CartMandate as the person approves it (items, the database's "
        "prices, shipping, tax, total, refund periods, merchant; stock problems per line)."
    ),
    path=Path(__file__).parent / "ui" / "cart_review.html",
)
