"""The merchant seed (seeds/merchant-agent-mcp.md) as acceptance criteria: definitions and result shapes.

The seed's three `@mcp.tool(...)` definitions and its input/output examples are copied below.
Registered inputSchemas must be the seed's plus only what docs/apps/merchant.md documents (`limit` at least 1; the
`cart_plan.items[{product_id, quantity}]` shape); descriptions start with the seed's. Results must
have the examples' fields with the same JSON types — yen as floats (1980.0), as the seed shows.
docs/apps/merchant.md's documented additions: `search`, `warnings`, `merchant_authorization` and AP2's contents.
"""

from __future__ import annotations

import copy
import json

import pytest
from jsonschema import Draft202012Validator

from mcpsite.mcp import registry
from mcpsite.mcp.errors import InvalidParams
from mcpsite.tests.contract import assert_shape

pytestmark = pytest.mark.django_db

SEED = {
    "search_products": {
        "description": "データベースから商品を検索",
        "input_schema": {
            "type": "object",
            "properties": {
                "keywords": {"type": "array", "items": {"type": "string"}, "description": "検索キーワードリスト"},
                "limit": {"type": "integer", "description": "最大検索結果数", "default": 20},
            },
            "required": ["keywords"],
        },
    },
    "check_inventory": {
        "description": "在庫状況を確認",
        "input_schema": {
            "type": "object",
            "properties": {
                "product_ids": {"type": "array", "items": {"type": "integer"}, "description": "商品IDリスト"}
            },
            "required": ["product_ids"],
        },
    },
    "build_cart_mandates": {
        "description": "AP2準拠のCartMandateを構築（未署名）",
        "input_schema": {
            "type": "object",
            "properties": {
                "cart_plan": {"type": "object", "description": "カートプラン（optimize_cartの結果）"},
                "products": {"type": "array", "items": {"type": "object"}, "description": "商品情報リスト"},
                "shipping_address": {"type": "object", "description": "AP2準拠のContactAddress"},
            },
            "required": ["cart_plan", "products"],
        },
    },
}

# docs/apps/merchant.md: "`limit` is at least 1 (above 100 it is capped)";
# "`cart_plan.items[{product_id, quantity}]` … malformed plans → -32602".
DOCUMENTED_SCHEMA_ADDITIONS = {
    "search_products": {("limit", "minimum"): 1},
    "build_cart_mandates": {
        ("cart_plan", "properties"): {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"product_id": {"type": "integer"}, "quantity": {"type": "integer"}},
                    "required": ["product_id", "quantity"],
                },
            }
        },
        ("cart_plan", "required"): ["items"],
    },
}

SEED_ADDRESS = {
    "recipient": "山田太郎",
    "addressLine": ["東京都渋谷区1-2-3"],
    "city": "渋谷区",
    "country": "JP",
    "postalCode": "150-0001",
}
SEED_OUTPUT = json.loads(
    r"""
{
"search_products": {
  "products": [
    {
      "id": 1,
      "sku": "MUGIBO-CAL-2025",
      "name": "むぎぼーカレンダー2025",
      "description": "むぎぼーの可愛いカレンダー",
      "price_cents": 198000,
      "price_jpy": 1980.0,
      "inventory_count": 50,
      "category": "goods",
      "brand": "むぎぼー",
      "image_url": "/assets/むぎぼーカレンダー.png",
      "refund_period_days": 30
    }
  ]
},
"check_inventory": {"inventory": {"1": 50, "2": 30, "3": 0}},
"build_cart_mandates": {
  "cart_mandate": {
    "type": "CartMandate",
    "contents": {
      "id": "cart_abc123",
      "merchant_id": "did:ap2:merchant:mugibo_merchant",
      "display_items": [
        {"label": "むぎぼーカレンダー2025", "amount": {"value": 3960.0, "currency": "JPY"}, "refund_period": 2592000}
      ],
      "total": {"value": 8108.0, "currency": "JPY"},
      "metadata": {
        "raw_items": [
          {
            "product_id": 1,
            "sku": "MUGIBO-CAL-2025",
            "name": "むぎぼーカレンダー2025",
            "quantity": 2,
            "unit_price_jpy": 1980.0,
            "total_price_jpy": 3960.0
          }
        ],
        "shipping_fee": 500.0,
        "tax": 746.0,
        "subtotal": 7460.0
      },
      "shipping_address": null
    },
    "created_at": "2025-10-23T12:00:00Z"
  }
}
}
"""
)
# The seed shows `"shipping_address": {...}`: the address the agent sent (docs/apps/merchant.md: echoed as given).
SEED_OUTPUT["build_cart_mandates"]["cart_mandate"]["contents"]["shipping_address"] = SEED_ADDRESS

DOCUMENTED_EXTRAS = {
    "search_products": {"$.search"},
    "build_cart_mandates": {
        "$.warnings",
        "$.cart_mandate.merchant_authorization",
        "$.cart_mandate.contents.user_cart_confirmation_required",
        "$.cart_mandate.contents.payment_request",
        "$.cart_mandate.contents.cart_expiry",
        "$.cart_mandate.contents.merchant_name",
    },
}


def seed_schema_with_documented_additions(name: str) -> dict:
    schema = copy.deepcopy(SEED[name]["input_schema"])
    for (prop, key), value in DOCUMENTED_SCHEMA_ADDITIONS.get(name, {}).items():
        schema["properties"][prop][key] = value
    return schema


# --- definitions ----------------------------------------------------------------------------------


def test_the_group_is_the_three_seed_tools():
    assert [spec.name for spec in registry.tools(["merchant"])] == list(SEED)


@pytest.mark.parametrize("name", list(SEED))
def test_input_schema_is_the_seed_plus_only_documented_constraints(name):
    assert registry.get(name).input_schema == seed_schema_with_documented_additions(name)


@pytest.mark.parametrize("name", list(SEED))
def test_description_starts_with_the_seeds(name):
    assert registry.get(name).description.startswith(SEED[name]["description"])


@pytest.mark.parametrize("name", list(SEED))
def test_output_schema_accepts_the_seed_example(name):
    example = copy.deepcopy(SEED_OUTPUT[name])
    if name == "build_cart_mandates":  # docs/apps/merchant.md: always present, null when unsigned (the seed's 未署名)
        example["cart_mandate"]["merchant_authorization"] = None
    Draft202012Validator(registry.get(name).output_schema).validate(example)


def test_seed_rest_tools_list_exposes_the_schemas(http_post):
    """The seed's `curl -X POST …/mcp/tools/list -d '{}'`."""
    response = http_post("/mcp/tools/list", "{}")
    listed = {t["name"]: t for t in response.json()["tools"] if t["name"] in SEED}
    assert list(listed) == list(SEED)
    for name, tool in listed.items():
        assert tool["inputSchema"] == seed_schema_with_documented_additions(name)
        assert tool["description"].startswith(SEED[name]["description"])


def test_mcp_tools_list_exposes_the_schemas(mcp_tools_list):
    tools = {tool.name: tool for tool in mcp_tools_list("merchant")}
    assert list(tools) == list(SEED)
    for name, tool in tools.items():
        assert tool.input_schema == seed_schema_with_documented_additions(name)
        assert tool.output_schema == registry.get(name).output_schema


# --- results --------------------------------------------------------------------------------------


def _check(name: str, result: dict) -> None:
    seed = SEED_OUTPUT[name]
    if name == "check_inventory":  # a map keyed by the requested ids: the seed's value type for each
        seed = {"inventory": dict.fromkeys(result["inventory"], 50)}
    assert_shape(seed, result, extras=DOCUMENTED_EXTRAS.get(name, set()), integers=True)  # yen as 1980.0
    Draft202012Validator(registry.get(name).output_schema).validate(result)


@pytest.mark.parametrize("keywords", [["かわいい", "グッズ"], ["むぎぼー", "カレンダー"], [], ["該当なし"]])
def test_search_products_has_the_seed_shape(catalogue, call_tool, keywords):
    result = call_tool("search_products", {"keywords": keywords, "limit": 10})
    _check("search_products", result)
    assert all(p["inventory_count"] > 0 for p in result["products"])


def test_search_products_seed_sample_product(catalogue, call_tool):
    result = call_tool("search_products", {"keywords": ["むぎぼー", "カレンダー"], "limit": 10})
    first = {k: v for k, v in result["products"][0].items() if k != "id"}
    assert first == {k: v for k, v in SEED_OUTPUT["search_products"]["products"][0].items() if k != "id"}


def test_check_inventory_has_the_seed_shape(catalogue, call_tool):
    ids = [catalogue["MUGIBO-CAL-2025"].pk, catalogue["MUGIBO-MUG"].pk, 999_999]
    result = call_tool("check_inventory", {"product_ids": ids})
    _check("check_inventory", result)
    assert list(result["inventory"]) == [str(pk) for pk in ids]
    assert result["inventory"][str(ids[0])] == 50 and result["inventory"]["999999"] == 0


def test_build_cart_mandates_has_the_seed_shape(catalogue, call_tool):
    calendar, hoodie = catalogue["MUGIBO-CAL-2025"], catalogue["MUGIBO-HOODIE"]
    result = call_tool(
        "build_cart_mandates",
        {
            "cart_plan": {
                "items": [{"product_id": calendar.pk, "quantity": 2}, {"product_id": hoodie.pk, "quantity": 1}]
            },
            "products": [
                {"id": calendar.pk, "name": "...", "price_jpy": 1980.0},
                {"id": hoodie.pk, "name": "...", "price_jpy": 3500.0},
            ],
            "shipping_address": SEED_ADDRESS,
        },
    )
    _check("build_cart_mandates", result)
    contents = result["cart_mandate"]["contents"]
    assert contents["shipping_address"] == SEED_ADDRESS
    assert contents["metadata"]["subtotal"] == 7460.0
    assert contents["display_items"][0]["refund_period"] == 2592000  # seconds, as the seed
    assert result["cart_mandate"]["merchant_authorization"] is None  # 未署名 unless a key is configured


def test_build_cart_mandates_without_an_address(catalogue, call_tool):
    calendar = catalogue["MUGIBO-CAL-2025"]
    result = call_tool(
        "build_cart_mandates", {"cart_plan": {"items": [{"product_id": calendar.pk, "quantity": 1}]}, "products": []}
    )
    Draft202012Validator(registry.get("build_cart_mandates").output_schema).validate(result)
    assert result["cart_mandate"]["contents"]["shipping_address"] is None


def test_seed_rest_tools_call(catalogue, http_post):
    """The seed's `curl -X POST …/mcp/tools/call` samples: the tool's result is the body."""
    for name, arguments in [
        ("search_products", {"keywords": ["むぎぼー"], "limit": 5}),
        ("check_inventory", {"product_ids": [1, 2, 3]}),
    ]:
        response = http_post("/mcp/tools/call", {"name": name, "arguments": arguments})
        assert response.status_code == 200
        _check(name, response.json())


# --- the size bounds live in the tools, not in the seed's schemas ----------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("search_products", {"keywords": ["a"] * 21}, "keywords must have at most 20 items"),
        ("search_products", {"keywords": ["a", "x" * 101]}, "keywords[1] must be at most 100 characters"),
        ("check_inventory", {"product_ids": list(range(1001))}, "product_ids must have at most 1000 items"),
        ("build_cart_mandates", {"cart_plan": {"items": []}, "products": []}, "cart_plan.items must list at least"),
        (
            "build_cart_mandates",
            {"cart_plan": {"items": [{"product_id": 1, "quantity": 1}] * 101}, "products": []},
            "cart_plan.items must have at most 100 items",
        ),
        (
            "build_cart_mandates",
            {"cart_plan": {"items": [{"product_id": 1, "quantity": 0}]}, "products": []},
            "cart_plan.items[0].quantity must be between 1 and 10000",
        ),
        (
            "build_cart_mandates",
            {"cart_plan": {"items": [{"product_id": 1, "quantity": 10001}]}, "products": []},
            "cart_plan.items[0].quantity must be between 1 and 10000",
        ),
    ],
)
def test_size_bounds_are_invalid_params(catalogue, call_tool, name, arguments, message):
    with pytest.raises(InvalidParams) as caught:
        call_tool(name, arguments)
    assert message in caught.value.message
