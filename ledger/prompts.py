"""MCP prompts of the ledger group: the month-end check of the books."""

from __future__ import annotations

import calendar
import datetime

from mcpsite.core.errors import InvalidParams
from mcpsite.mcp.prompts import PromptArgument, prompt
from mcpsite.mcp.registry import CallContext

from . import selectors

GROUP = "ledger"
COMPLETIONS = 20


def complete_account_code(value: str, context: dict[str, str], ctx: CallContext) -> list[str]:
    """Active account codes starting with what was typed, or whose name contains it (現金 → 1000)."""
    return selectors.account_codes_matching(query=value, limit=COMPLETIONS)


def _month(value: str) -> tuple[datetime.date, datetime.date]:
    try:
        first = datetime.datetime.strptime(value, "%Y-%m").date()
    except ValueError:
        raise InvalidParams(f'month must be YYYY-MM (got "{value[:20]}")') from None
    return first, first.replace(day=calendar.monthrange(first.year, first.month)[1])


@prompt(
    name="month_end_check",
    title="月次決算チェック",
    description="指定月の試算・貸借対照表・損益計算書を確かめ、気になる科目の残高を調べる手順。",
    arguments=[
        PromptArgument("month", "対象月 (YYYY-MM)"),
        PromptArgument(
            "accountCode", "重点的に確認する勘定科目コード (省略可)", required=False, complete=complete_account_code
        ),
    ],
)
def month_end_check(args: dict[str, str]) -> str:
    first, last = _month(args["month"])
    focus = args.get("accountCode")
    focus_step = (
        f"4. get_account_balance (accountCode={focus}, asOfDate={last}) で重点科目の残高を確認し、前月末"
        f" ({first - datetime.timedelta(days=1)}) と比べて増減の理由を説明する。\n"
        if focus
        else "4. 残高が大きく動いた科目を get_account_balance で前月末と比べ、増減の理由を説明する。\n"
    )
    return (
        f"{first:%Y年%m月} の月次決算チェックをしてください。\n"
        f"1. generate_balance_sheet (asOfDate={last}) で貸借対照表を作り、verified が true (資産 = 負債 + 純資産)"
        " かを確かめる。\n"
        f"2. generate_income_statement (startDate={first}, endDate={last}) で当月の損益を出す。\n"
        "3. list_accounts で科目表を確認し、残高がマイナスの資産科目や使われていない科目がないかを見る。\n"
        f"{focus_step}"
        "5. 修正仕訳が必要なら create_journal_entry の内容 (date, description, 借方・貸方の accountCode と金額) を"
        "提案し、私の承認を得てから登録する。"
    )
