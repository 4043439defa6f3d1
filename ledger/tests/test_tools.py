"""The five ledger tools through the real dispatcher: the seed's shapes, codes and messages."""

import datetime
from decimal import Decimal

import pytest

from ledger.models import JournalLine
from mcpsite.core.errors import ApplicationError
from mcpsite.mcp import registry
from mcpsite.mcp.wire import INVALID_PARAMS, jsonrpc_code

pytestmark = pytest.mark.django_db

SEED_TOOLS = {
    "create_journal_entry",
    "get_account_balance",
    "list_accounts",
    "generate_balance_sheet",
    "generate_income_statement",
}


def entry(date="2024-01-15", description="商品仕入", lines=None):
    return {
        "date": date,
        "description": description,
        "lines": lines
        if lines is not None
        else [{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 10000}],
    }


def error_of(call_tool, name, args) -> ApplicationError:
    with pytest.raises(ApplicationError) as info:
        call_tool(name, args)
    return info.value


def test_exactly_the_five_seed_tools_are_in_the_group():
    tools = {spec.name: spec.describe() for spec in registry.tools(["ledger"])}
    assert set(tools) == SEED_TOOLS
    create = tools["create_journal_entry"]["inputSchema"]
    assert create["required"] == ["date", "description", "lines"]
    assert create["properties"]["lines"]["minItems"] == 2
    assert create["properties"]["lines"]["items"]["properties"]["debitAmount"] == {
        "type": "number",
        "description": "借方金額",
        "minimum": 0,
    }
    assert tools["list_accounts"]["inputSchema"]["properties"]["type"]["enum"] == [
        "asset",
        "liability",
        "equity",
        "revenue",
        "expense",
    ]
    assert tools["generate_income_statement"]["inputSchema"]["required"] == ["startDate", "endDate"]


def test_create_journal_entry_returns_the_seed_shape(call_tool, chart):
    result = call_tool("create_journal_entry", entry())
    assert result["success"] is True
    je = result["journalEntry"]
    assert (je["date"], je["description"]) == ("2024-01-15", "商品仕入")
    assert [
        (line["accountCode"], line["accountName"], line["debitAmount"], line["creditAmount"]) for line in je["lines"]
    ] == [
        ("500", "仕入", 10000, 0),
        ("100", "現金", 0, 10000),
    ]
    assert len({je["id"], *(line["id"] for line in je["lines"])}) == 3
    assert isinstance(je["lines"][0]["debitAmount"], int)  # whole amounts are JSON integers


def test_cents_survive_as_exact_decimals(call_tool, chart):
    lines = [
        {"accountCode": "650", "debitAmount": 0.1},
        {"accountCode": "650", "debitAmount": 0.2},
        {"accountCode": "100", "creditAmount": 0.3},
    ]
    result = call_tool("create_journal_entry", entry(lines=lines))
    assert [line["debitAmount"] for line in result["journalEntry"]["lines"]] == [0.1, 0.2, 0]
    assert call_tool("get_account_balance", {"accountCode": "650", "asOfDate": "2024-12-31"})["balance"] == 0.3


def test_unbalanced_entry_is_409_and_says_by_how_much(call_tool, chart):
    lines = [{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 9000}]
    error = error_of(call_tool, "create_journal_entry", entry(lines=lines))
    assert jsonrpc_code(error) == 409
    assert "debits 10,000 ≠ credits 9,000" in error.message
    assert "exceed by 1,000" in error.message
    assert error.data == {"debitTotal": 10000, "creditTotal": 9000, "difference": 1000}


def test_unknown_accounts_are_404_naming_every_code(call_tool, chart):
    lines = [{"accountCode": "999", "debitAmount": 100}, {"accountCode": "998", "creditAmount": 100}]
    error = error_of(call_tool, "create_journal_entry", entry(lines=lines))
    assert jsonrpc_code(error) == 404
    assert "998, 999" in error.message
    assert error.data["unknownAccountCodes"] == ["998", "999"]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"accountCode": "100", "debitAmount": 100}], "lines"),
        (
            [{"accountCode": "100", "debitAmount": -100}, {"accountCode": "400", "creditAmount": -100}],
            "lines[0].debitAmount",
        ),
        (
            [
                {"accountCode": "100", "debitAmount": 100, "creditAmount": 100},
                {"accountCode": "400", "creditAmount": 0},
            ],
            "lines[0] has both debitAmount and creditAmount",
        ),
        ([{"accountCode": "100"}, {"accountCode": "400"}], "lines[0] has no amount"),
        (
            [{"accountCode": "100", "debitAmount": 0, "creditAmount": 0}, {"accountCode": "400", "creditAmount": 5}],
            "lines[0] has no amount",
        ),
        (
            [{"accountCode": "100", "debitAmount": 10.005}, {"accountCode": "400", "creditAmount": 10.005}],
            "lines[0].debitAmount has more than 2 decimal places",
        ),
        (
            [{"accountCode": "100", "debitAmount": 1e20}, {"accountCode": "400", "creditAmount": 1e20}],
            "lines[0].debitAmount is too large",
        ),
        (
            [{"accountCode": "100", "debitAmount": float("inf")}, {"accountCode": "400", "creditAmount": 1}],
            "lines[0].debitAmount: must be a finite number",  # the dispatcher refuses NaN/Infinity for every tool
        ),
        (
            [{"accountCode": "100", "debitAmount": float("nan")}, {"accountCode": "400", "creditAmount": 1}],
            "lines[0].debitAmount: must be a finite number",  # the dispatcher refuses NaN/Infinity for every tool
        ),
        (
            [{"accountCode": "", "debitAmount": 1}, {"accountCode": "400", "creditAmount": 1}],
            "accountCode must not be empty",
        ),
        ([{"debitAmount": 1}, {"accountCode": "400", "creditAmount": 1}], "accountCode"),
        (
            [{"accountCode": "100", "debitAmount": "1"}, {"accountCode": "400", "creditAmount": 1}],
            "lines[0].debitAmount",
        ),
    ],
)
def test_bad_lines_get_specific_invalid_params(call_tool, chart, lines, message):
    error = error_of(call_tool, "create_journal_entry", entry(lines=lines))
    assert jsonrpc_code(error) == INVALID_PARAMS
    assert message in error.detail


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (entry(date="2024/01/15"), 'date must be a date in YYYY-MM-DD format (got "2024/01/15")'),
        (entry(date="2024-02-30"), 'date is not a valid calendar date (got "2024-02-30")'),
        (entry(date="tomorrow"), "YYYY-MM-DD"),
        (entry(description="   "), "description must not be empty"),
        (entry(description="x" * 501), "description is too long"),
        ({"date": "2024-01-15", "lines": []}, "description"),
    ],
)
def test_bad_dates_and_descriptions_are_invalid_params(call_tool, chart, args, message):
    error = error_of(call_tool, "create_journal_entry", args)
    assert jsonrpc_code(error) == INVALID_PARAMS
    assert message in error.detail


def test_inactive_account_is_refused_by_name(call_tool, chart):
    from ledger.models import Account

    Account.objects.filter(code="100").update(is_active=False)
    error = error_of(call_tool, "create_journal_entry", entry())
    assert jsonrpc_code(error) == INVALID_PARAMS
    assert "Inactive account(s) cannot be posted to: 100 現金" in error.message


def test_no_partial_write_on_error(call_tool, chart):
    from ledger.models import JournalEntry, JournalLine

    lines = [{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 1}]
    with pytest.raises(ApplicationError):
        call_tool("create_journal_entry", entry(lines=lines))
    assert JournalEntry.objects.count() == JournalLine.objects.count() == 0


def test_get_account_balance_on_the_normal_side_up_to_and_including_as_of(call_tool, post):
    post("2024-03-01", ("100", 200000), ("300", -200000))
    post("2024-03-31", ("100", 30000), ("400", -30000))
    post("2024-04-01", ("500", 80000), ("100", -80000))
    assert call_tool("get_account_balance", {"accountCode": "100", "asOfDate": "2024-03-31"}) == {
        "accountCode": "100",
        "accountName": "現金",
        "accountType": "asset",
        "balance": 230000,
        "asOfDate": "2024-03-31",
    }
    assert call_tool("get_account_balance", {"accountCode": "100", "asOfDate": "2024-04-01"})["balance"] == 150000
    assert call_tool("get_account_balance", {"accountCode": "400", "asOfDate": "2024-12-31"})["balance"] == 30000
    assert call_tool("get_account_balance", {"accountCode": "100", "asOfDate": "2024-02-29"})["balance"] == 0


def test_get_account_balance_defaults_to_today(call_tool, post):
    today = datetime.date.today()
    post(today.isoformat(), ("100", 1000), ("400", -1000))
    result = call_tool("get_account_balance", {"accountCode": "100"})
    assert (result["balance"], result["asOfDate"]) == (1000, result["asOfDate"])
    assert abs(datetime.date.fromisoformat(result["asOfDate"]) - today) <= datetime.timedelta(days=1)


def test_get_account_balance_errors(call_tool, chart):
    assert jsonrpc_code(error_of(call_tool, "get_account_balance", {"accountCode": "999"})) == 404
    error = error_of(call_tool, "get_account_balance", {"accountCode": "100", "asOfDate": "31/03/2024"})
    assert (jsonrpc_code(error), error.message) == (
        INVALID_PARAMS,
        'asOfDate must be a date in YYYY-MM-DD format (got "31/03/2024")',
    )


def test_list_accounts_filters_by_type_and_partial_category(call_tool, chart):
    assets = call_tool("list_accounts", {"type": "asset", "category": "流動"})["accounts"]
    assert assets[:2] == [
        {"code": "100", "name": "現金", "type": "asset", "category": "流動資産", "active": True},
        {"code": "101", "name": "預金", "type": "asset", "category": "流動資産", "active": True},
    ]
    assert {a["category"] for a in assets} == {"流動資産"}
    every = call_tool("list_accounts", {})["accounts"]
    assert [a["code"] for a in every] == sorted(a["code"] for a in every)
    assert {a["type"] for a in every} == {"asset", "liability", "equity", "revenue", "expense"}
    assert call_tool("list_accounts", {"category": "販売費"})["accounts"][0]["name"] == "給料"
    assert call_tool("list_accounts", {"category": "存在しない"}) == {"accounts": []}
    assert jsonrpc_code(error_of(call_tool, "list_accounts", {"type": "income"})) == INVALID_PARAMS


def test_balance_sheet_matches_the_seed_example(call_tool, post):
    post("2024-01-05", ("101", 300000), ("300", -300000))
    post("2024-01-10", ("101", 100000), ("250", -100000))
    post("2024-02-01", ("500", 60000), ("200", -40000), ("101", -20000))
    post("2024-03-01", ("110", 120000), ("100", 30000), ("400", -150000))
    post("2024-03-20", ("600", 20000), ("101", -20000))
    result = call_tool("generate_balance_sheet", {"asOfDate": "2024-03-31"})
    sheet = result["balanceSheet"]
    assert result["asOfDate"] == "2024-03-31"
    assert (sheet["assets"]["total"], sheet["liabilities"]["total"], sheet["equity"]["total"]) == (
        510000,
        140000,
        370000,
    )
    assert sheet["equity"]["retainedEarnings"] == 70000
    assert sheet["verified"] is True
    assert result["summary"] == "資産合計: 510,000円 / 負債・純資産合計: 510,000円 (バランスOK)"
    assert sheet["assets"]["accounts"] == [
        {"code": "100", "name": "現金", "balance": 30000},
        {"code": "101", "name": "預金", "balance": 360000},
        {"code": "110", "name": "売掛金", "balance": 120000},
    ]
    assert sheet["equity"]["accounts"] == [{"code": "300", "name": "資本金", "balance": 300000}]


def test_income_statement_for_an_inclusive_period(call_tool, post):
    post("2024-03-31", ("100", 1000), ("400", -1000))  # before the period
    post("2024-04-01", ("110", 505000), ("400", -505000))
    post("2025-03-31", ("500", 435000), ("101", -435000))
    post("2025-04-01", ("600", 5000), ("101", -5000))  # after the period
    result = call_tool("generate_income_statement", {"startDate": "2024-04-01", "endDate": "2025-03-31"})
    assert result == {
        "period": {"startDate": "2024-04-01", "endDate": "2025-03-31"},
        "incomeStatement": {
            "revenue": {"total": 505000, "accounts": [{"code": "400", "name": "売上", "balance": 505000}]},
            "expenses": {"total": 435000, "accounts": [{"code": "500", "name": "仕入", "balance": 435000}]},
            "netIncome": 70000,
        },
        "summary": "当期純利益: 70,000円",
    }


def test_income_statement_loss_and_bad_period(call_tool, post):
    post("2024-05-01", ("610", 80000), ("101", -80000))
    result = call_tool("generate_income_statement", {"startDate": "2024-05-01", "endDate": "2024-05-01"})
    assert (result["incomeStatement"]["netIncome"], result["summary"]) == (-80000, "当期純損失: 80,000円")
    error = error_of(call_tool, "generate_income_statement", {"startDate": "2024-06-01", "endDate": "2024-05-01"})
    assert (jsonrpc_code(error), error.message) == (
        INVALID_PARAMS,
        "startDate (2024-06-01) is after endDate (2024-05-01)",
    )
    assert jsonrpc_code(error_of(call_tool, "generate_income_statement", {"startDate": "2024-06-01"})) == INVALID_PARAMS


def test_rpc_transport_renders_seed_errors(rpc, chart):
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "create_journal_entry",
        "params": entry(lines=[{"accountCode": "500", "debitAmount": 100}, {"accountCode": "100", "creditAmount": 90}]),
    }
    error = rpc.post(body).json()["error"]
    assert error["code"] == 409
    assert error["data"] == {"debitTotal": 100, "creditTotal": 90, "difference": 10}


# --- amounts exact on every database (docs/apps/ledger.md, "Amounts") ---------------------------------------------


def _pair(amount):
    return entry(lines=[{"accountCode": "100", "debitAmount": amount}, {"accountCode": "400", "creditAmount": amount}])


@pytest.mark.parametrize("amount", [12_345_678_901_234.56, 123_456_789_012_345.67, 10_000_000_000_000])
def test_amounts_beyond_what_both_databases_hold_exactly_are_refused(call_tool, chart, amount):
    """SQLite keeps 15 significant digits (it rounded the first to .6 and the second to a whole yen)."""
    error = error_of(call_tool, "create_journal_entry", _pair(amount))
    assert jsonrpc_code(error) == INVALID_PARAMS
    assert error.detail == "lines[0].debitAmount is too large (maximum 9,999,999,999,999.99)"
    assert not JournalLine.objects.exists()


def test_the_largest_amount_is_kept_and_reported_exactly(call_tool, chart):
    line = call_tool("create_journal_entry", _pair(9_999_999_999_999.99))["journalEntry"]["lines"][0]
    assert line["debitAmount"] == 9_999_999_999_999.99
    assert JournalLine.objects.get(account__code="100").debit == Decimal("9999999999999.99")
    balance = call_tool("get_account_balance", {"accountCode": "100", "asOfDate": "2024-01-31"})["balance"]
    assert balance == 9_999_999_999_999.99


def test_large_totals_go_out_as_exact_numbers(rpc, post):
    for _ in range(2):
        post("2024-01-15", ("100", Decimal("9999999999999.99")), ("400", -Decimal("9999999999999.99")))
    text = rpc.post(
        {"jsonrpc": "2.0", "id": 1, "method": "generate_balance_sheet", "params": {"asOfDate": "2024-01-31"}}
    ).content.decode()
    assert '"total":19999999999999.98' in text and "e+" not in text
    assert "資産合計: 19,999,999,999,999.98円" in text


def test_a_total_no_json_number_carries_exactly_is_refused_not_rounded(call_tool, post):
    """70,368,744,177,664.01 as a float is ...664.02: the report says so instead of sending it."""
    for _ in range(7):
        post("2024-01-15", ("100", Decimal("9999999999999.99")), ("400", -Decimal("9999999999999.99")))
    post("2024-01-15", ("100", Decimal("368744177664.08")), ("400", -Decimal("368744177664.08")))
    error = error_of(call_tool, "generate_balance_sheet", {"asOfDate": "2024-01-31"})
    assert jsonrpc_code(error) == 409 and error.data["amount"] == "70368744177664.01"
    assert "70,368,744,177,664.01" in error.detail
