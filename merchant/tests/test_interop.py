"""The merchant tools through the official MCP client over Streamable HTTP (a real uvicorn process)."""

import json

import anyio
import pytest

from mcpsite.tests.live import live_site, mcp_session

pytestmark = pytest.mark.slow


def test_official_client_searches_and_builds_a_mandate(live_template, tmp_path):
    async def scenario(session):
        tools = {t.name for t in (await session.list_tools()).tools}
        found = await session.call_tool("search_products", {"keywords": ["ﾑｷﾞﾎﾞｰ"], "limit": 3})
        first = found.structured_content["products"][0]
        cart = await session.call_tool(
            "build_cart_mandates",
            {"cart_plan": {"items": [{"product_id": first["id"], "quantity": 2}]}, "products": []},
        )
        too_many = await session.call_tool(
            "build_cart_mandates",
            {"cart_plan": {"items": [{"product_id": first["id"], "quantity": 999}]}, "products": []},
        )
        return tools, found, cart, too_many

    with live_site(live_template, tmp_path) as site:
        site.manage("seed_merchant", "-v", "0")
        url = site.start_server()
        tools, found, cart, too_many = anyio.run(mcp_session, f"{url}/mcp/merchant", site.key, scenario)
    assert tools == {"search_products", "check_inventory", "build_cart_mandates"}
    assert found.structured_content["products"][0]["name"] == "むぎぼーカレンダー2025"
    assert "むぎぼー" in found.content[0].text and json.loads(found.content[0].text) == found.structured_content
    assert cart.structured_content["cart_mandate"]["contents"]["total"]["value"] == 4906.0  # 3960 + 500 + 446
    assert too_many.is_error is True
    assert too_many.structured_content["code"] == 409
