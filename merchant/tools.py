"""MCP tools of the merchant group, as the seed (merchant-agent-mcp.md) names and shapes them."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from mcpsite.core.errors import InvalidParams
from mcpsite.mcp.registry import READ_ONLY, CallContext, tool
from mcpsite.mcp.schema import nullable

from . import mandates, selectors
from .models import Product

# The MCP Apps view of a CartMandate (docs/mcp-apps.md), registered in resources.py.
CART_REVIEW = "ui://merchant/cart-review"

# Bounds on the size of a call. They are checked here, not in the inputSchemas, which are the seed's
# as-is (docs/apps/merchant.md documents only `limit` 1–100 and the `cart_plan.items[{product_id, quantity}]` shape).
MAX_KEYWORDS = 20
MAX_SEARCH_LIMIT = 100
MAX_KEYWORD_LENGTH = 100
MAX_PRODUCT_IDS = 1000
MAX_CART_ITEMS = 100
MAX_QUANTITY = 10000

_AMOUNT = {
    "type": "object",
    "properties": {"value": {"type": "number"}, "currency": {"type": "string"}},
    "required": ["value", "currency"],
}
_PRODUCT = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "sku": {"type": "string"},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "price_cents": {"type": "integer"},
        "price_jpy": {"type": "number"},
        "inventory_count": {"type": "integer"},
        "category": nullable({"type": "string"}),
        "brand": nullable({"type": "string"}),
        "image_url": nullable({"type": "string"}),
        "refund_period_days": {"type": "integer"},
    },
    "required": [
        "id",
        "sku",
        "name",
        "description",
        "price_cents",
        "price_jpy",
        "inventory_count",
        "category",
        "brand",
        "image_url",
        "refund_period_days",
    ],
}

_AMOUNT = {
    "type": "object",
    "properties": {"value": {"type": "number"}, "currency": {"type": "string"}},
    "required": ["value", "currency"],
}
_RAW_ITEM = {
    "type": "object",
    "properties": {
        "product_id": {"type": "integer"},
        "sku": {"type": "string"},
        "name": {"type": "string"},
        "quantity": {"type": "integer"},
        "unit_price_jpy": {"type": "number"},
        "total_price_jpy": {"type": "number"},
    },
    "required": ["product_id", "sku", "name", "quantity", "unit_price_jpy", "total_price_jpy"],
}
# The seed's fields of `cart_mandate.contents` (AP2's, beside them, are checked by the AP2 models in the tests).
_CART_CONTENTS = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "merchant_id": {"type": "string"},
        "display_items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"label": {"type": "string"}, "amount": _AMOUNT, "refund_period": {"type": "integer"}},
                "required": ["label", "amount", "refund_period"],
            },
        },
        "total": _AMOUNT,
        "metadata": {
            "type": "object",
            "properties": {
                "raw_items": {"type": "array", "items": _RAW_ITEM},
                "shipping_fee": {"type": "number"},
                "tax": {"type": "number"},
                "subtotal": {"type": "number"},
            },
            "required": ["raw_items", "shipping_fee", "tax", "subtotal"],
        },
        "shipping_address": nullable({"type": "object"}),  # the address as the agent sent it (null: none)
    },
    "required": ["id", "merchant_id", "display_items", "total", "metadata", "shipping_address"],
}


def _at_most(name: str, values: list, limit: int) -> None:
    if len(values) > limit:
        raise InvalidParams(f"{name} must have at most {limit} items ({len(values)} given)")


def product_row(product: Product) -> dict[str, Any]:
    """A product as the seed's search_products shows it."""
    return {
        "id": product.pk,
        "sku": product.sku,
        "name": product.name,
        "description": product.description,
        "price_cents": product.price_cents,
        "price_jpy": product.price_cents / 100,  # the seed: float yen
        "inventory_count": product.inventory_count,
        "category": product.category or None,
        "brand": product.brand or None,
        "image_url": product.image_url or None,
        "refund_period_days": product.refund_period_days,
    }


@tool(
    name="search_products",
    title=_("Search products"),
    icon="🔍",
    description=(
        "データベースから商品を検索。キーワードを空白で結合して全文検索し（日本語対応: 全角/半角・カタカナ/ひらがな・"
        "長音の違いを吸収）、在庫のある商品だけを返す。ヒットなし・検索エンジン障害時は在庫のある全商品を返し、"
        "`search.fallback` にその旨を記す。"
    ),
    input_schema={
        "type": "object",
        "properties": {
            "keywords": {
                "type": "array",
                "items": {"type": "string"},
                "description": "検索キーワードリスト",
            },
            "limit": {"type": "integer", "description": "最大検索結果数", "default": 20, "minimum": 1},
        },
        "required": ["keywords"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "products": {"type": "array", "items": _PRODUCT},
            "search": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "backend": {"enum": ["meilisearch", "database", "all_in_stock"]},
                    "fallback": {"type": "array", "items": {"enum": ["backend_error", "no_hits"]}},
                },
                "required": ["query", "backend", "fallback"],
            },
        },
        "required": ["products"],
    },
    annotations=READ_ONLY,
)
def search_products(args: dict, ctx: CallContext) -> dict:
    """Meilisearch (or the database search) for the ids, one query for the rows, in-stock only."""
    keywords = args["keywords"]
    _at_most("keywords", keywords, MAX_KEYWORDS)
    for i, keyword in enumerate(keywords):
        if len(keyword) > MAX_KEYWORD_LENGTH:
            raise InvalidParams(f"keywords[{i}] must be at most {MAX_KEYWORD_LENGTH} characters long")
    # Capped, not refused, as cinema's get_movie_list caps its limit: asking for more is not an error.
    limit = min(args.get("limit", 20), MAX_SEARCH_LIMIT)
    result = selectors.product_search(keywords=keywords, limit=limit)
    return {
        "products": [product_row(p) for p in result.products],
        "search": {"query": result.query, "backend": result.backend, "fallback": result.fallback},
    }


@tool(
    name="check_inventory",
    title=_("Check stock"),
    icon="📦",
    description="在庫状況を確認。存在しない商品IDの在庫は0。販売停止中の商品も0（カートに入れられないため）。",
    input_schema={
        "type": "object",
        "properties": {
            "product_ids": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "商品IDリスト",
            }
        },
        "required": ["product_ids"],
    },
    output_schema={
        "type": "object",
        "properties": {"inventory": {"type": "object", "additionalProperties": {"type": "integer"}}},
        "required": ["inventory"],
    },
    annotations=READ_ONLY,
)
def check_inventory(args: dict, ctx: CallContext) -> dict:
    """Stock per id, keyed by the id as a string (JSON object keys), unknown ids 0."""
    _at_most("product_ids", args["product_ids"], MAX_PRODUCT_IDS)
    counts = selectors.inventory_counts(product_ids=args["product_ids"])
    return {"inventory": {str(pk): count for pk, count in counts.items()}}


@tool(
    name="build_cart_mandates",
    title=_("Build carts"),
    icon="🛒",
    description=(
        "AP2準拠のCartMandateを構築（未署名）。MERCHANT_SIGNING_KEY設定時のみ merchant_authorization に署名を付与。"
        "価格・商品名・SKUはデータベースから取得し、"
        "`products`引数の値は使わない。送料: 小計¥5,000以上で無料、未満は¥500。税: (小計+送料)×10%、円未満切り捨て。"
        "存在しない商品は404、在庫を超える数量は409。"
    ),
    input_schema={
        "type": "object",
        "properties": {
            "cart_plan": {
                "type": "object",
                "description": "カートプラン（optimize_cartの結果）",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "product_id": {"type": "integer"},
                                "quantity": {"type": "integer"},
                            },
                            "required": ["product_id", "quantity"],
                        },
                    }
                },
                "required": ["items"],
            },
            "products": {"type": "array", "items": {"type": "object"}, "description": "商品情報リスト"},
            "shipping_address": {"type": "object", "description": "AP2準拠のContactAddress"},
        },
        "required": ["cart_plan", "products"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "cart_mandate": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": ["CartMandate"]},
                    "contents": _CART_CONTENTS,
                    "merchant_authorization": nullable({"type": "string"}),
                    "created_at": {"type": "string"},
                },
                "required": ["type", "contents", "merchant_authorization", "created_at"],
            },
            "warnings": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["cart_mandate"],
    },
    annotations=READ_ONLY,
    ui=CART_REVIEW,
)
def build_cart_mandates(args: dict, ctx: CallContext) -> dict:
    """The CartMandate for `cart_plan.items`, priced from the catalogue; `warnings` where the agent's data differs."""
    items = args["cart_plan"]["items"]
    if not items:
        raise InvalidParams("cart_plan.items must list at least one item")
    _at_most("cart_plan.items", items, MAX_CART_ITEMS)
    for i, item in enumerate(items):
        if not 1 <= item["quantity"] <= MAX_QUANTITY:
            raise InvalidParams(f"cart_plan.items[{i}].quantity must be between 1 and {MAX_QUANTITY}")
    mandate, warnings = mandates.cart_mandate_build(
        items=items,
        shipping_address=args.get("shipping_address"),
        agent_products=args["products"],
    )
    return {"cart_mandate": mandate, "warnings": warnings}
