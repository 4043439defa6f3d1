"""MCP tools of the ledger group (seeds/ledger-mcp-server.md): exactly these five, camelCase as the seed.

Each tool parses its arguments, calls one service or selector and shapes the seed's result. Amounts
arrive as JSON numbers and become Decimal at once (`Decimal(str(x))`, never float arithmetic).
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from mcpsite.core.errors import Conflict, InvalidParams
from mcpsite.mcp.params import DateError, iso_date
from mcpsite.mcp.registry import READ_ONLY, CallContext, tool

from . import selectors, services
from .models import AccountType
from .services import LineInput, yen

_NUMBER = {"type": "number"}
_ACCOUNT_ROWS = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"code": {"type": "string"}, "name": {"type": "string"}, "balance": _NUMBER},
        "required": ["code", "name", "balance"],
    },
}
_JOURNAL_LINE = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "accountCode": {"type": "string"},
        "accountName": {"type": "string"},
        "debitAmount": _NUMBER,
        "creditAmount": _NUMBER,
    },
    "required": ["id", "accountCode", "accountName", "debitAmount", "creditAmount"],
}
_JOURNAL_ENTRY = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "date": {"type": "string"},
        "description": {"type": "string"},
        "lines": {"type": "array", "items": _JOURNAL_LINE},
    },
    "required": ["id", "date", "description", "lines"],
}
_SECTION = {"type": "object", "properties": {"total": _NUMBER, "accounts": _ACCOUNT_ROWS}, "required": ["total"]}

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def parse_date(value: str, name: str) -> datetime.date:
    """A YYYY-MM-DD date (InvalidParams with the argument's name otherwise)."""
    shown = value if len(value) <= 40 else value[:40] + "…"
    try:
        return iso_date(value)
    except DateError as exc:
        if exc.reason == "format":
            raise InvalidParams(f'{name} must be a date in YYYY-MM-DD format (got "{shown}")') from None
        raise InvalidParams(f'{name} is not a valid calendar date (got "{shown}")') from None


def _optional_date(args: dict[str, Any], name: str) -> datetime.date:
    value = args.get(name)
    return timezone.localdate() if value is None else parse_date(value, name)


def _amount(value: Any, where: str) -> Decimal:
    if value is None:
        return Decimal(0)
    amount = Decimal(str(value))  # the JSON text of the number, not its binary float
    if not amount.is_finite():
        raise InvalidParams(f"{where} must be a finite number")
    return amount


class AmountNotExact(Conflict):
    message = "Amount too large to report exactly"


def _money(value: Decimal) -> Decimal:
    """A reported amount, which goes out as a JSON number: whole amounts as integers (exact at any size), others as
    floats, which carry the cents exactly only up to about 7 × 10^13. A total beyond that (many lines near the
    maximum) is refused with the exact amount as text, never sent as a float that has lost digits."""
    if value != value.to_integral_value() and Decimal(repr(float(value))) != value:
        raise AmountNotExact(
            data={
                "message": f"{yen(value)} cannot be sent exactly as a JSON number (its cents would be lost)",
                "amount": str(value),
            }
        )
    return value


def _accounts(rows) -> list[dict[str, Any]]:
    return [{"code": r.account.code, "name": r.account.name, "balance": _money(r.balance)} for r in rows]


@tool(
    name="create_journal_entry",
    title=_("Record a journal entry"),
    icon="✍️",
    writes=True,
    annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
    description="新しい仕訳を作成します。複式簿記に基づき、借方と貸方の合計が一致する必要があります。",
    input_schema={
        "type": "object",
        "properties": {
            "date": {"type": "string", "description": "仕訳日付 (YYYY-MM-DD形式)", "format": "date"},
            "description": {"type": "string", "description": "仕訳の摘要"},
            "lines": {
                "type": "array",
                "description": "仕訳明細行（2行以上必須）",
                "minItems": 2,
                "items": {
                    "type": "object",
                    "properties": {
                        "accountCode": {"type": "string", "description": "勘定科目コード（例: 100, 400）"},
                        "debitAmount": {"type": "number", "description": "借方金額", "minimum": 0},
                        "creditAmount": {"type": "number", "description": "貸方金額", "minimum": 0},
                    },
                    "required": ["accountCode"],
                },
            },
        },
        "required": ["date", "description", "lines"],
    },
    output_schema={
        "type": "object",
        "properties": {"success": {"type": "boolean"}, "journalEntry": _JOURNAL_ENTRY},
        "required": ["success", "journalEntry"],
    },
)
def create_journal_entry(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Post a balanced entry: 409 when unbalanced, 404 naming unknown account codes, -32602 for bad input."""
    date = parse_date(args["date"], "date")
    lines = [
        LineInput(
            account_code=line["accountCode"],
            debit=_amount(line.get("debitAmount"), f"lines[{i}].debitAmount"),
            credit=_amount(line.get("creditAmount"), f"lines[{i}].creditAmount"),
        )
        for i, line in enumerate(args["lines"])
    ]
    actor = cast("User | None", ctx.owner)  # the API key's owner: an instance of the user model
    entry = services.journal_entry_create(date=date, description=args["description"], lines=lines, actor=actor)
    entry = selectors.journal_entry_get(entry_id=entry.pk)
    return {
        "success": True,
        "journalEntry": {
            "id": str(entry.pk),
            "date": entry.date.isoformat(),
            "description": entry.description,
            "lines": [
                {
                    "id": str(line.pk),
                    "accountCode": line.account.code,
                    "accountName": line.account.name,
                    "debitAmount": line.debit,
                    "creditAmount": line.credit,
                }
                for line in entry.lines.all()
            ],
        },
    }


@tool(
    name="get_account_balance",
    title=_("Account balance"),
    icon="💰",
    annotations=READ_ONLY,
    description="指定された勘定科目の残高を取得します。",
    input_schema={
        "type": "object",
        "properties": {
            "accountCode": {"type": "string", "description": "勘定科目コード（例: 100, 400）"},
            "asOfDate": {
                "type": "string",
                "description": "基準日 (YYYY-MM-DD形式、省略時は今日)",
                "format": "date",
            },
        },
        "required": ["accountCode"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "accountCode": {"type": "string"},
            "accountName": {"type": "string"},
            "accountType": {"type": "string"},
            "balance": _NUMBER,
            "asOfDate": {"type": "string"},
        },
        "required": ["accountCode", "accountName", "accountType", "balance", "asOfDate"],
    },
)
def get_account_balance(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """The balance on the account's normal side over entries up to and including asOfDate (default today)."""
    as_of = _optional_date(args, "asOfDate")
    account = selectors.account_get(code=args["accountCode"])
    return {
        "accountCode": account.code,
        "accountName": account.name,
        "accountType": account.type,
        "balance": _money(selectors.account_balance(account=account, as_of=as_of)),
        "asOfDate": as_of.isoformat(),
    }


@tool(
    name="list_accounts",
    title=_("Chart of accounts"),
    icon="📒",
    annotations=READ_ONLY,
    description="勘定科目の一覧を取得します。タイプやカテゴリでフィルタリングできます。",
    input_schema={
        "type": "object",
        "properties": {
            "type": {
                "type": "string",
                "description": "科目タイプでフィルタ (asset, liability, equity, revenue, expense)",
                "enum": list(AccountType.values),
            },
            "category": {"type": "string", "description": "カテゴリでフィルタ（部分一致）"},
        },
    },
    output_schema={
        "type": "object",
        "properties": {
            "accounts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string"},
                        "name": {"type": "string"},
                        "type": {"type": "string"},
                        "category": {"type": "string"},
                        "active": {"type": "boolean"},
                    },
                    "required": ["code", "name", "type", "category"],
                },
            }
        },
        "required": ["accounts"],
    },
)
def list_accounts(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """The chart of accounts in code order, filtered by type and/or category (partial match)."""
    accounts = selectors.account_list(type=args.get("type"), category=args.get("category"))
    return {
        "accounts": [
            {"code": a.code, "name": a.name, "type": a.type, "category": a.category, "active": a.is_active}
            for a in accounts
        ]
    }


@tool(
    name="generate_balance_sheet",
    title=_("Balance sheet"),
    icon="⚖️",
    annotations=READ_ONLY,
    description="指定した日時点での貸借対照表を生成します。",
    input_schema={
        "type": "object",
        "properties": {
            "asOfDate": {
                "type": "string",
                "description": "基準日 (YYYY-MM-DD形式、省略時は今日)",
                "format": "date",
            }
        },
    },
    output_schema={
        "type": "object",
        "properties": {
            "asOfDate": {"type": "string"},
            "balanceSheet": {
                "type": "object",
                "properties": {
                    "assets": _SECTION,
                    "liabilities": _SECTION,
                    "equity": _SECTION,
                    "verified": {"type": "boolean"},
                },
                "required": ["assets", "liabilities", "equity", "verified"],
            },
            "summary": {"type": "string"},
        },
        "required": ["asOfDate", "balanceSheet", "summary"],
    },
)
def generate_balance_sheet(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Assets = liabilities + equity (with retained earnings) at asOfDate, from one SQL aggregate."""
    sheet = selectors.balance_sheet(as_of=_optional_date(args, "asOfDate"))
    if sheet.verified:
        verdict = "バランスOK"
    else:
        verdict = f"バランス不一致: 差額 {yen(sheet.assets.total - sheet.liabilities_and_equity)}円"
    return {
        "asOfDate": sheet.as_of.isoformat(),
        "balanceSheet": {
            "assets": {"total": _money(sheet.assets.total), "accounts": _accounts(sheet.assets.accounts)},
            "liabilities": {
                "total": _money(sheet.liabilities.total),
                "accounts": _accounts(sheet.liabilities.accounts),
            },
            "equity": {
                "total": _money(sheet.equity.total),
                "accounts": _accounts(sheet.equity.accounts),
                "retainedEarnings": _money(sheet.retained_earnings),
            },
            "verified": sheet.verified,
        },
        "summary": (
            f"資産合計: {yen(sheet.assets.total)}円 / "
            f"負債・純資産合計: {yen(sheet.liabilities_and_equity)}円 ({verdict})"
        ),
    }


@tool(
    name="generate_income_statement",
    title=_("Income statement"),
    icon="📊",
    annotations=READ_ONLY,
    description="指定した期間の損益計算書を生成します。",
    input_schema={
        "type": "object",
        "properties": {
            "startDate": {"type": "string", "description": "開始日 (YYYY-MM-DD形式)", "format": "date"},
            "endDate": {"type": "string", "description": "終了日 (YYYY-MM-DD形式)", "format": "date"},
        },
        "required": ["startDate", "endDate"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "period": {
                "type": "object",
                "properties": {"startDate": {"type": "string"}, "endDate": {"type": "string"}},
                "required": ["startDate", "endDate"],
            },
            "incomeStatement": {
                "type": "object",
                "properties": {"revenue": _SECTION, "expenses": _SECTION, "netIncome": _NUMBER},
                "required": ["revenue", "expenses", "netIncome"],
            },
            "summary": {"type": "string"},
        },
        "required": ["period", "incomeStatement", "summary"],
    },
)
def generate_income_statement(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Revenue − expenses for the inclusive period; startDate after endDate is an error."""
    start = parse_date(args["startDate"], "startDate")
    end = parse_date(args["endDate"], "endDate")
    if start > end:
        raise InvalidParams(f"startDate ({start}) is after endDate ({end})")
    statement = selectors.income_statement(start=start, end=end)
    net = statement.net_income
    summary = f"当期純利益: {yen(net)}円" if net >= 0 else f"当期純損失: {yen(-net)}円"
    return {
        "period": {"startDate": start.isoformat(), "endDate": end.isoformat()},
        "incomeStatement": {
            "revenue": {"total": _money(statement.revenue.total), "accounts": _accounts(statement.revenue.accounts)},
            "expenses": {
                "total": _money(statement.expenses.total),
                "accounts": _accounts(statement.expenses.accounts),
            },
            "netIncome": _money(net),
        },
        "summary": summary,
    }
