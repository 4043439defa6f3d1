"""The merchant tools through the real dispatcher and the seed's transports (/mcp/tools/call, /rpc)."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from mcpsite.core.errors import InvalidParams

pytestmark = pytest.mark.django_db


def test_search_products_returns_the_seed_shape(catalogue, call_tool):
    result = call_tool("search_products", {"keywords": ["むぎぼー", "カレンダー"], "limit": 10})
    first = result["products"][0]
    assert first == {
        "id": catalogue["MUGIBO-CAL-2025"].pk,
        "sku": "MUGIBO-CAL-2025",
        "name": "むぎぼーカレンダー2025",
        "description": "むぎぼーの可愛いカレンダー",
        "price_cents": 198000,
        "price_jpy": 1980.0,
        "inventory_count": 50,
        "category": "goods",
        "brand": "むぎぼー",
        "image_url": "/assets/むぎぼーカレンダー.png",
        "refund_period_days": 30,
    }
    assert isinstance(first["price_jpy"], float)
    assert result["search"] == {"query": "むぎぼー カレンダー", "backend": "database", "fallback": []}


@pytest.mark.parametrize(
    "keyword",
    ['"', "'", "NEAR(", "*", "AND OR", "NOT", "^", "col:むぎぼ", "{a b}", "%", "_", "\\", "\x01", "むぎ\x1fぼーカレ"],
)
def test_search_products_hostile_keywords_are_plain_text(catalogue, call_tool, keyword):
    # FTS5 syntax is quoted away; control characters are spaces (a NUL never gets here: the dispatcher refuses it).
    result = call_tool("search_products", {"keywords": [keyword, f"x{keyword}むぎぼー"]})
    assert isinstance(result["products"], list)


def test_search_products_control_characters_separate_words(catalogue, call_tool):
    result = call_tool("search_products", {"keywords": ["むぎぼー\x07カレンダー"]})
    assert result["products"][0]["sku"] == "MUGIBO-CAL-2025"
    with pytest.raises(InvalidParams) as refused:
        call_tool("search_products", {"keywords": ["むぎぼー\x00カレンダー"]})
    assert re.search(r"keywords\[0\]: must not contain NUL", refused.value.detail)


def test_search_products_default_limit_is_20(catalogue, call_tool):
    from merchant.catalog import synthetic_products
    from merchant.models import Product

    Product.objects.bulk_create(list(synthetic_products(50)))
    assert len(call_tool("search_products", {"keywords": []})["products"]) == 20


def test_search_products_fallback_is_reported(catalogue, call_tool):
    result = call_tool("search_products", {"keywords": ["該当なし"], "limit": 2})
    assert result["search"]["fallback"] == ["no_hits"] and len(result["products"]) == 2


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"keywords": "むぎぼー"},
        {"keywords": [1]},
        {"keywords": ["a"], "limit": 0},
    ],
)
def test_search_products_rejects_bad_arguments(catalogue, call_tool, arguments):
    with pytest.raises(InvalidParams):
        call_tool("search_products", arguments)


def test_search_products_caps_a_limit_above_100_as_cinema_does(catalogue, call_tool, monkeypatch):
    from merchant import selectors

    asked = []
    search = selectors.product_search
    monkeypatch.setattr(selectors, "product_search", lambda **kw: asked.append(kw["limit"]) or search(**kw))
    result = call_tool("search_products", {"keywords": ["かわいい"], "limit": 10_000})
    assert asked == [100] and result["products"]


def test_search_products_with_meilisearch_down_is_never_an_error(indexed, meili, call_tool):
    meili.stop()
    result = call_tool("search_products", {"keywords": ["ﾑｷﾞﾎﾞｰ"]})
    assert result["search"]["fallback"] == ["backend_error"]
    assert result["products"][0]["name"] == "むぎぼーカレンダー2025"


def test_search_products_queries_are_constant(indexed, meili, call_tool):
    for limit in (1, 5):  # 5 in-stock products match
        with CaptureQueriesContext(connection) as queries:
            result = call_tool("search_products", {"keywords": ["かわいい"], "limit": limit})
        assert len(result["products"]) == limit
        # one for the hits + the platform's audit row (and its rate-limit cache hits)
        product_queries = [q for q in queries if "merchant_product" in q["sql"]]
        assert len(product_queries) == 1


def test_check_inventory_as_the_seed_shows(catalogue, call_tool):
    cal, plush = catalogue["MUGIBO-CAL-2025"], catalogue["MUGIBO-PLUSH-S"]
    result = call_tool("check_inventory", {"product_ids": [cal.pk, plush.pk, 424242]})
    assert result == {"inventory": {str(cal.pk): 50, str(plush.pk): 0, "424242": 0}}


def test_check_inventory_rejects_non_integer_ids(call_tool):
    with pytest.raises(InvalidParams):
        call_tool("check_inventory", {"product_ids": ["1"]})


def test_seed_curl_sample_over_rest(catalogue, http_post):
    response = http_post(
        "/mcp/tools/call", {"name": "search_products", "arguments": {"keywords": ["むぎぼー"], "limit": 5}}
    )
    assert response.status_code == 200
    body = response.json()
    assert len(body["products"]) == 5 and body["products"][0]["sku"] == "MUGIBO-CAL-2025"
    assert "むぎぼー" in response.content.decode()  # UTF-8, not \\u escapes


def test_the_merchant_rest_endpoints_serve_the_seed_servers_three_tools(catalogue, http_post):
    listed = http_post("/mcp/merchant/tools/list", "{}")
    assert [t["name"] for t in listed.json()["tools"]] == ["search_products", "check_inventory", "build_cart_mandates"]
    cal = catalogue["MUGIBO-CAL-2025"]
    called = http_post("/mcp/merchant/tools/call", {"name": "check_inventory", "arguments": {"product_ids": [cal.pk]}})
    assert called.json() == {"inventory": {str(cal.pk): 50}}


def test_check_inventory_takes_integral_numbers_and_refuses_huge_ones(catalogue, call_tool):
    cal = catalogue["MUGIBO-CAL-2025"]
    assert call_tool("check_inventory", {"product_ids": [float(cal.pk)]}) == {"inventory": {str(cal.pk): 50}}
    with pytest.raises(InvalidParams) as refused:
        call_tool("check_inventory", {"product_ids": [1e308]})
    assert re.search(r"product_ids\[0\]: must be at most", refused.value.detail)


def test_tools_are_listed_with_the_seed_schemas(http_post):
    response = http_post("/mcp/tools/list", "{}")
    tools = {t["name"]: t for t in response.json()["tools"]}
    assert tools["search_products"]["inputSchema"]["required"] == ["keywords"]
    assert tools["search_products"]["inputSchema"]["properties"]["limit"]["default"] == 20
    assert tools["check_inventory"]["inputSchema"]["properties"]["product_ids"]["items"] == {"type": "integer"}
    assert tools["build_cart_mandates"]["inputSchema"]["required"] == ["cart_plan", "products"]


def test_conflict_over_rpc_has_the_code_and_data(catalogue, http_post):
    hoodie = catalogue["MUGIBO-HOODIE"]
    response = http_post(
        "/rpc",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "build_cart_mandates",
            "params": {"cart_plan": {"items": [{"product_id": hoodie.pk, "quantity": 99}]}, "products": []},
        },
    )
    error = response.json()["error"]
    assert error["code"] == 409
    assert error["data"]["insufficient_stock"][0]["available"] == 15


def test_an_inactive_product_is_not_in_stock_where_a_cart_refuses_it(catalogue, http_post):
    """The poster is off sale with stock left: build_cart_mandates refuses it (404), so check_inventory says 0."""
    poster = catalogue["MUGIBO-POSTER-2024"]
    assert not poster.active and poster.inventory_count > 0
    checked = http_post("/mcp/tools/call", {"name": "check_inventory", "arguments": {"product_ids": [poster.pk]}})
    assert checked.json() == {"inventory": {str(poster.pk): 0}}
    built = http_post(
        "/mcp/tools/call",
        {
            "name": "build_cart_mandates",
            "arguments": {"cart_plan": {"items": [{"product_id": poster.pk, "quantity": 1}]}, "products": []},
        },
    )
    assert built.status_code == 404
