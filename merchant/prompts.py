"""MCP prompts of the merchant group: a gift under a budget, as an AP2 cart."""

from __future__ import annotations

from mcpsite.mcp.prompts import PromptArgument, prompt
from mcpsite.mcp.registry import CallContext

from . import selectors

GROUP = "merchant"
COMPLETIONS = 20


def complete_product_name(value: str, context: dict[str, str], ctx: CallContext) -> list[str]:
    """Names of in-stock products matching what was typed (全角/半角・カタカナ/ひらがな・長音の違いを吸収)."""
    return [p.name for p in selectors.products_matching(query=value, limit=COMPLETIONS)]


@prompt(
    name="gift_under_budget",
    title="予算内でギフトを選んでカートを作る",
    description="贈る相手と予算からギフトを探し、在庫を確かめて AP2 の CartMandate を作る手順。",
    arguments=[
        PromptArgument("recipient", "贈る相手と用途 (例: 母の誕生日)"),
        PromptArgument("budget_jpy", "予算 (円、送料・税込み)"),
        PromptArgument(
            "keyword", "探したい商品名やキーワード (省略可)", required=False, complete=complete_product_name
        ),
    ],
)
def gift_under_budget(args: dict[str, str]) -> str:
    keyword = args.get("keyword")
    search = f"keywords に「{keyword}」と関連語" if keyword else "keywords に相手と用途から考えた語"
    return (
        f"{args['recipient']} へのギフトを、送料・税込みで {args['budget_jpy']} 円以内で選んでください。\n"
        f"1. search_products で {search} を渡して候補を探す (search.fallback があればその旨を伝える)。\n"
        "2. 価格 (price_jpy) に送料 (小計 5,000 円未満は 500 円) と税 10% を足して予算内に収まる候補を 3 つまで示し、"
        "私に選んでもらう。\n"
        "3. check_inventory (product_ids) で在庫を確かめる。\n"
        "4. build_cart_mandates に cart_plan.items (product_id, quantity) と products を渡して CartMandate を作り、"
        "合計金額と warnings を伝える。CartMandate は未署名の見積もりで、支払いはまだ行われない。"
    )
