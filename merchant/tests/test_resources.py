"""The merchant resource (a product by id), prompt and completers through the official client (in process)."""

from __future__ import annotations

import json

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference, ResourceTemplateReference

from merchant.tools import product_row

pytestmark = pytest.mark.django_db(transaction=True)

PRODUCT = "mcpsite://merchant/products/{product_id}"


def test_product_by_id_is_its_search_products_row(mcp_run, catalogue):
    mug = catalogue["MUGIBO-MUG"]

    async def scenario(client):
        return (await client.read_resource(f"mcpsite://merchant/products/{mug.pk}")).contents[0]

    contents = mcp_run(scenario)
    assert json.loads(contents.text) == json.loads(json.dumps(product_row(mug)))
    assert json.loads(contents.text)["name"] == "むぎぼーマグカップ"


@pytest.mark.parametrize("product_id", ["999999", "abc", "1" * 30])
def test_unknown_product_is_a_404_naming_it(mcp_run, catalogue, product_id):
    async def scenario(client):
        with pytest.raises(MCPError) as excinfo:
            await client.read_resource(f"mcpsite://merchant/products/{product_id}")
        return excinfo.value

    error = mcp_run(scenario)
    assert error.error.code == 404 and error.error.data == f"Product {product_id} not found"


@pytest.mark.parametrize("typed", ["むぎぼー", "ムギボー", "ﾑｷﾞﾎﾞｰ", "むぎぼ"])
def test_product_names_complete_with_the_search_tolerance(mcp_run, catalogue, typed):
    async def scenario(client):
        ref = PromptReference(name="gift_under_budget")
        return (await client.complete(ref, {"name": "keyword", "value": typed})).completion.values

    names = mcp_run(scenario)
    assert "むぎぼーマグカップ" in names
    assert "むぎぼーぬいぐるみ（S）" not in names  # out of stock: not a gift we can sell
    assert all("むぎぼー" in name for name in names)


def test_product_ids_complete_by_digits_or_by_name(mcp_run, catalogue):
    mug = catalogue["MUGIBO-MUG"]

    async def scenario(client):
        ref = ResourceTemplateReference(uri=PRODUCT)
        by_digits = await client.complete(ref, {"name": "product_id", "value": str(mug.pk)})
        by_name = await client.complete(ref, {"name": "product_id", "value": "マグカップ"})
        return by_digits.completion.values, by_name.completion.values

    by_digits, by_name = mcp_run(scenario)
    assert by_digits[0] == str(mug.pk) and all(v.startswith(str(mug.pk)) for v in by_digits)
    assert by_name[0] == str(mug.pk)


def test_gift_prompt_renders_with_real_arguments(mcp_run, catalogue):
    async def scenario(client):
        result = await client.get_prompt(
            "gift_under_budget", {"recipient": "母の誕生日", "budget_jpy": "8000", "keyword": "マグカップ"}
        )
        return result.messages[0].content.text

    text = mcp_run(scenario)
    assert "母の誕生日 へのギフトを、送料・税込みで 8000 円以内で選んでください" in text
    assert "keywords に「マグカップ」と関連語" in text
    for tool in ("search_products", "check_inventory", "build_cart_mandates"):
        assert tool in text
