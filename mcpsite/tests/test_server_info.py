"""Each endpoint states its serverInfo: a single-group endpoint its seed's server name and version where the seed
names one (the merchant seed: `merchant_agent_mcp` 1.0.0, declared on MerchantConfig), every other the site's."""

from __future__ import annotations

import pytest
from mcp_types import SERVER_INFO_META_KEY

from .transports import Transports, message

pytestmark = pytest.mark.django_db(transaction=True)  # MCP transports run the dispatcher in worker threads

INITIALIZE = message(
    "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
)
MERCHANT = {"name": "merchant_agent_mcp", "version": "1.0.0"}
MERCHANT_TOOLS = {"search_products", "check_inventory", "build_cart_mandates"}
SITE = {"name": "mcpsite", "version": "1.0.0"}

CASES = [
    ("mcp", "/mcp/merchant", INITIALIZE, MERCHANT),
    ("mcp", "/mcp/merchant/", INITIALIZE, MERCHANT),
    ("mcp", "/mcp", INITIALIZE, SITE),
    ("mcp", "/mcp/cinema", INITIALIZE, SITE),  # the cinema seed names no server
    ("mcp_2026", "/mcp/merchant", message("server/discover", {}), MERCHANT),  # 2026-07-28: the `_meta` stamp
    ("mcp_2026", "/mcp/merchant", message("tools/list", {}), MERCHANT),
    ("mcp_2026", "/mcp", message("server/discover", {}), SITE),
    ("stdio", "merchant", INITIALIZE, MERCHANT),
    ("stdio", None, INITIALIZE, SITE),
    ("ws", "/ws/merchant", INITIALIZE, MERCHANT),
    ("ws", "/ws", INITIALIZE, SITE),
    ("http", "/rpc", INITIALIZE, SITE),
]


@pytest.mark.parametrize(("transport", "where", "sent", "expected"), CASES)
def test_each_endpoint_states_its_server_info(api_key, http_post, transport, where, sent, expected):
    status, answer = getattr(Transports(api_key[1], http_post), transport)(where, sent)
    result = answer["result"]
    info = result["serverInfo"] if sent["method"] == "initialize" else result["_meta"][SERVER_INFO_META_KEY]
    assert {"name": info["name"], "version": info["version"]} == expected
    if sent["method"] == "tools/list":  # the merchant endpoint still serves its group, and only it
        assert {tool["name"] for tool in result["tools"]} == {
            "search_products",
            "check_inventory",
            "build_cart_mandates",
        }
