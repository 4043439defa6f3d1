"""MCP resources of the ledger group: the chart of accounts and the balance sheet as of a date.

Contents are exactly what list_accounts and generate_balance_sheet return, as compact JSON.
"""

from __future__ import annotations

import datetime

from django.utils import timezone

from mcpsite.core.jsonutil import dumps, to_jsonable
from mcpsite.mcp.registry import CallContext
from mcpsite.mcp.resources import resource, resource_template

from .tools import generate_balance_sheet, list_accounts

GROUP = "ledger"


@resource(
    uri="mcpsite://ledger/accounts",
    name="chart-of-accounts",
    title="勘定科目表",
    description="勘定科目の一覧 (code, name, type, category, active)。list_accounts と同じ形。",
)
def chart_of_accounts(ctx: CallContext) -> str:
    return dumps(to_jsonable(list_accounts({}, ctx)))


def complete_as_of(value: str, context: dict[str, str], ctx: CallContext) -> list[str]:
    """Today, then the last day of each of the twelve months before, that start with what was typed."""
    today = timezone.localdate()
    days, month_end = [today], today.replace(day=1)
    for _ in range(12):
        month_end = month_end - datetime.timedelta(days=1)
        days.append(month_end)
        month_end = month_end.replace(day=1)
    return [d.isoformat() for d in days if d.isoformat().startswith(value.strip())]


@resource_template(
    uri_template="mcpsite://ledger/balance-sheet/{asOfDate}",
    name="balance-sheet",
    title="貸借対照表（基準日）",
    description="asOfDate (YYYY-MM-DD) 時点の貸借対照表。generate_balance_sheet と同じ形。",
    complete={"asOfDate": complete_as_of},
)
def balance_sheet(variables: dict[str, str], ctx: CallContext) -> str:
    return dumps(to_jsonable(generate_balance_sheet({"asOfDate": variables["asOfDate"]}, ctx)))
