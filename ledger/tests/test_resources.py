"""The ledger resources, prompt and account-code completion through the official client (in process)."""

from __future__ import annotations

import json

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference, ResourceTemplateReference

pytestmark = pytest.mark.django_db(transaction=True)


def test_chart_of_accounts_is_list_accounts(mcp_run, chart, call_tool):
    async def scenario(client):
        return (await client.read_resource("mcpsite://ledger/accounts")).contents[0]

    contents = mcp_run(scenario)
    assert contents.mime_type == "application/json"
    assert json.loads(contents.text) == call_tool("list_accounts", {})
    assert {"code": "100", "name": "現金"}.items() <= json.loads(contents.text)["accounts"][0].items()


def test_balance_sheet_as_of_a_date_is_generate_balance_sheet(mcp_run, post, call_tool):
    post("2024-01-15", ("100", 50000), ("400", -50000))

    async def scenario(client):
        return json.loads((await client.read_resource("mcpsite://ledger/balance-sheet/2024-01-31")).contents[0].text)

    sheet = mcp_run(scenario)
    assert sheet == json.loads(json.dumps(call_tool("generate_balance_sheet", {"asOfDate": "2024-01-31"})))
    assert sheet["asOfDate"] == "2024-01-31" and sheet["balanceSheet"]["verified"] is True
    assert sheet["balanceSheet"]["assets"]["total"] == 50000


@pytest.mark.parametrize(
    ("as_of", "words"),
    [("2024-13-01", "not a valid calendar date"), ("yesterday", "must be a date in YYYY-MM-DD format")],
)
def test_a_bad_date_is_a_specific_invalid_params_error(mcp_run, chart, as_of, words):
    async def scenario(client):
        with pytest.raises(MCPError) as excinfo:
            await client.read_resource(f"mcpsite://ledger/balance-sheet/{as_of}")
        return excinfo.value

    error = mcp_run(scenario)
    assert error.error.code == -32602 and words in error.error.message


def test_account_codes_complete_by_code_or_name(mcp_run, chart):
    ref = PromptReference(name="month_end_check")

    async def scenario(client):
        by_code = await client.complete(ref, {"name": "accountCode", "value": "10"})
        by_name = await client.complete(ref, {"name": "accountCode", "value": "現金"})
        return by_code.completion.values, by_name.completion.values

    by_code, by_name = mcp_run(scenario)
    assert by_code and all(code.startswith("10") for code in by_code) and by_code == sorted(by_code)
    assert by_name[0] == "100"


def test_balance_sheet_dates_complete_to_month_ends(mcp_run, chart, monkeypatch):
    import datetime

    from django.utils import timezone

    monkeypatch.setattr(timezone, "localdate", lambda *a: datetime.date(2026, 3, 15))

    async def scenario(client):
        ref = ResourceTemplateReference(uri="mcpsite://ledger/balance-sheet/{asOfDate}")
        return (await client.complete(ref, {"name": "asOfDate", "value": "2026-0"})).completion.values

    assert mcp_run(scenario) == ["2026-03-15", "2026-02-28", "2026-01-31"]


def test_month_end_prompt_renders_with_real_arguments(mcp_run, chart):
    async def scenario(client):
        focused = await client.get_prompt("month_end_check", {"month": "2024-02", "accountCode": "100"})
        plain = await client.get_prompt("month_end_check", {"month": "2024-02"})
        with pytest.raises(MCPError) as bad:
            await client.get_prompt("month_end_check", {"month": "February"})
        return focused.messages[0].content.text, plain.messages[0].content.text, bad.value

    focused, plain, bad = mcp_run(scenario)
    assert "generate_balance_sheet (asOfDate=2024-02-29)" in focused  # a leap year's month end
    assert "generate_income_statement (startDate=2024-02-01, endDate=2024-02-29)" in focused
    assert "get_account_balance (accountCode=100, asOfDate=2024-02-29)" in focused and "(2024-01-31)" in focused
    assert "list_accounts" in plain and "create_journal_entry" in plain and "accountCode=" not in plain
    assert bad.error.code == -32602 and 'month must be YYYY-MM (got "February")' in bad.error.message
