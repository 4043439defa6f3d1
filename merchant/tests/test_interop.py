"""The merchant tools through the official MCP client over Streamable HTTP (a real uvicorn process)."""

import json

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpsite.tests.live import make_live_site

pytestmark = pytest.mark.slow


def test_official_client_searches_and_builds_a_mandate(tmp_path):
    site, cleanup = make_live_site(tmp_path)
    try:
        site.manage("seed_merchant", "-v", "0")
        url = site.start_server()

        async def scenario():
            headers = {"Authorization": f"Bearer {site.key}"}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                async with streamable_http_client(f"{url}/mcp/merchant", http_client=http) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
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

        tools, found, cart, too_many = anyio.run(scenario)
    finally:
        site.stop()
        cleanup()
    assert tools == {"search_products", "check_inventory", "build_cart_mandates"}
    assert found.structured_content["products"][0]["name"] == "むぎぼーカレンダー2025"
    assert "むぎぼー" in found.content[0].text and json.loads(found.content[0].text) == found.structured_content
    assert cart.structured_content["cart_mandate"]["contents"]["total"]["value"] == 4906.0  # 3960 + 500 + 446
    assert too_many.is_error is True
    assert too_many.structured_content["code"] == 409
