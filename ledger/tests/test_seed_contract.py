"""The ledger seed (seeds/ledger-mcp-server.md) as acceptance criteria: definitions and result shapes.

The seed's tool definitions and response examples are copied verbatim below. Registered definitions
must equal them (name, description, inputSchema); real results must have the examples' fields with
the same JSON types (values differ). docs/apps/ledger.md's documented additions (`active`, `accounts`,
`retainedEarnings`, error `data`) are the only extra fields allowed.
"""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from mcpsite.core.errors import ApplicationError
from mcpsite.mcp import registry
from mcpsite.mcp.registry import RETRY_NOTE
from mcpsite.mcp.wire import jsonrpc_code
from mcpsite.tests.contract import assert_shape, keys_the_schema_does_not_require

SEED_TOOLS = json.loads(
    r"""
[
{
  "name": "create_journal_entry",
  "description": "新しい仕訳を作成します。複式簿記に基づき、借方と貸方の合計が一致する必要があります。",
  "inputSchema": {
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
            "creditAmount": {"type": "number", "description": "貸方金額", "minimum": 0}
          },
          "required": ["accountCode"]
        }
      }
    },
    "required": ["date", "description", "lines"]
  }
},
{
  "name": "get_account_balance",
  "description": "指定された勘定科目の残高を取得します。",
  "inputSchema": {
    "type": "object",
    "properties": {
      "accountCode": {"type": "string", "description": "勘定科目コード（例: 100, 400）"},
      "asOfDate": {"type": "string", "description": "基準日 (YYYY-MM-DD形式、省略時は今日)", "format": "date"}
    },
    "required": ["accountCode"]
  }
},
{
  "name": "list_accounts",
  "description": "勘定科目の一覧を取得します。タイプやカテゴリでフィルタリングできます。",
  "inputSchema": {
    "type": "object",
    "properties": {
      "type": {
        "type": "string",
        "description": "科目タイプでフィルタ (asset, liability, equity, revenue, expense)",
        "enum": ["asset", "liability", "equity", "revenue", "expense"]
      },
      "category": {"type": "string", "description": "カテゴリでフィルタ（部分一致）"}
    }
  }
},
{
  "name": "generate_balance_sheet",
  "description": "指定した日時点での貸借対照表を生成します。",
  "inputSchema": {
    "type": "object",
    "properties": {
      "asOfDate": {"type": "string", "description": "基準日 (YYYY-MM-DD形式、省略時は今日)", "format": "date"}
    }
  }
},
{
  "name": "generate_income_statement",
  "description": "指定した期間の損益計算書を生成します。",
  "inputSchema": {
    "type": "object",
    "properties": {
      "startDate": {"type": "string", "description": "開始日 (YYYY-MM-DD形式)", "format": "date"},
      "endDate": {"type": "string", "description": "終了日 (YYYY-MM-DD形式)", "format": "date"}
    },
    "required": ["startDate", "endDate"]
  }
}
]
"""
)
SEED = {tool["name"]: tool for tool in SEED_TOOLS}

SEED_RESPONSES = json.loads(
    r"""
{
"create_journal_entry": {
  "success": true,
  "journalEntry": {
    "id": "uuid",
    "date": "2024-01-15",
    "description": "商品仕入",
    "lines": [
      {"id": "uuid", "accountCode": "500", "accountName": "仕入", "debitAmount": 10000, "creditAmount": 0},
      {"id": "uuid", "accountCode": "100", "accountName": "現金", "debitAmount": 0, "creditAmount": 10000}
    ]
  }
},
"get_account_balance": {
  "accountCode": "100", "accountName": "現金", "accountType": "asset", "balance": 150000, "asOfDate": "2024-03-31"
},
"list_accounts": {
  "accounts": [
    {"code": "100", "name": "現金", "type": "asset", "category": "流動資産"},
    {"code": "101", "name": "預金", "type": "asset", "category": "流動資産"}
  ]
},
"generate_balance_sheet": {
  "asOfDate": "2024-03-31",
  "balanceSheet": {
    "assets": {"total": 430000},
    "liabilities": {"total": 140000},
    "equity": {"total": 290000},
    "verified": true
  },
  "summary": "資産合計: 430,000円 / 負債・純資産合計: 430,000円 (バランスOK)"
},
"generate_income_statement": {
  "period": {"startDate": "2024-04-01", "endDate": "2025-03-31"},
  "incomeStatement": {"revenue": {"total": 505000}, "expenses": {"total": 435000}, "netIncome": 70000},
  "summary": "当期純利益: 70,000円"
}
}
"""
)

# docs/apps/ledger.md "Deliberate additions to the seed": the only fields beyond the seed's examples.
DOCUMENTED_EXTRAS = {
    "list_accounts": {"$.accounts[].active"},
    "generate_balance_sheet": {
        "$.balanceSheet.assets.accounts",
        "$.balanceSheet.liabilities.accounts",
        "$.balanceSheet.equity.accounts",
        "$.balanceSheet.equity.retainedEarnings",
    },
    "generate_income_statement": {"$.incomeStatement.revenue.accounts", "$.incomeStatement.expenses.accounts"},
}


# --- definitions ----------------------------------------------------------------------------------


def described_as(name: str) -> str:
    """The seed's description; a writing tool's adds the retry note (docs/apps/ledger.md, docs/idempotency.md)."""
    return SEED[name]["description"] + (RETRY_NOTE if registry.get(name).writes else "")


def test_the_group_is_exactly_the_five_seed_tools():
    assert [spec.name for spec in registry.tools(["ledger"])] == [tool["name"] for tool in SEED_TOOLS]


@pytest.mark.parametrize("name", list(SEED))
def test_registered_definition_is_the_seed_verbatim(name):
    described = registry.get(name).describe()
    assert described["name"] == SEED[name]["name"]
    assert described["description"] == described_as(name)
    assert described["inputSchema"] == SEED[name]["inputSchema"]


@pytest.mark.parametrize("name", list(SEED))
def test_output_schema_accepts_the_seed_example(name):
    Draft202012Validator(registry.get(name).output_schema).validate(SEED_RESPONSES[name])


@pytest.mark.parametrize("name", list(SEED))
def test_output_schema_requires_every_key_of_the_seed_example(name):
    """Else a result that lost a seed field would still pass the seed-example tests."""
    assert keys_the_schema_does_not_require(registry.get(name).output_schema, SEED_RESPONSES[name]) == []


def test_mcp_tools_list_exposes_the_seed_schemas(mcp_tools_list):
    """The seed's transport is MCP (stdio): the SDK server's tools/list carries inputSchema unchanged."""
    tools = mcp_tools_list("ledger")
    assert [t.name for t in tools] == list(SEED)
    for tool in tools:
        assert tool.description == described_as(tool.name)
        assert tool.input_schema == SEED[tool.name]["inputSchema"]
        assert tool.output_schema == registry.get(tool.name).output_schema


def test_rpc_tools_list_exposes_the_seed_schemas(rpc):
    """The seed's smoke test: `{"jsonrpc":"2.0","method":"tools/list","id":1}`."""
    response = rpc.post({"jsonrpc": "2.0", "method": "tools/list", "id": 1})
    listed = {t["name"]: t for t in response.json()["result"]["tools"] if t["name"] in SEED}
    assert list(listed) == list(SEED)
    for name, tool in listed.items():
        assert tool["inputSchema"] == SEED[name]["inputSchema"]
        assert tool["description"] == described_as(name)


# --- results --------------------------------------------------------------------------------------


@pytest.fixture
def books(post):
    """Books whose balance sheet and income statement are the seed's figures (430,000 / 70,000)."""
    post("2024-04-01", ("100", 220000), ("300", -220000))  # 資本金
    post("2024-04-02", ("100", 140000), ("250", -140000))  # 借入金
    post("2024-04-10", ("100", 505000), ("400", -505000))  # 売上
    post("2024-04-20", ("500", 435000), ("100", -435000))  # 仕入


def _check(name: str, result: dict) -> None:
    # Whole yen are integers in the seed; amounts with cents are decimals: both are JSON numbers.
    assert_shape(SEED_RESPONSES[name], result, extras=DOCUMENTED_EXTRAS.get(name, set()))
    Draft202012Validator(registry.get(name).output_schema).validate(result)


def test_create_journal_entry_has_the_seed_shape(call_tool, chart):
    result = call_tool(
        "create_journal_entry",
        {
            "date": "2024-01-15",
            "description": "商品仕入",
            "lines": [{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 10000}],
        },
    )
    _check("create_journal_entry", result)
    assert [(line["debitAmount"], line["creditAmount"]) for line in result["journalEntry"]["lines"]] == [
        (10000, 0),
        (0, 10000),
    ]
    assert all(isinstance(line["debitAmount"], int) for line in result["journalEntry"]["lines"])


def test_get_account_balance_has_the_seed_shape(call_tool, books):
    result = call_tool("get_account_balance", {"accountCode": "100", "asOfDate": "2025-03-31"})
    _check("get_account_balance", result)
    assert (result["accountType"], result["asOfDate"]) == ("asset", "2025-03-31")


def test_list_accounts_has_the_seed_shape(call_tool, chart):
    result = call_tool("list_accounts", {})
    _check("list_accounts", result)
    assert result["accounts"][:2] == [
        {"code": "100", "name": "現金", "type": "asset", "category": "流動資産", "active": True},
        {"code": "101", "name": "預金", "type": "asset", "category": "流動資産", "active": True},
    ]


def test_generate_balance_sheet_has_the_seed_shape_and_summary(call_tool, books):
    result = call_tool("generate_balance_sheet", {"asOfDate": "2025-03-31"})
    _check("generate_balance_sheet", result)
    sheet = result["balanceSheet"]
    assert (sheet["assets"]["total"], sheet["liabilities"]["total"], sheet["equity"]["total"]) == (
        430000,
        140000,
        290000,
    )
    assert result["summary"] == SEED_RESPONSES["generate_balance_sheet"]["summary"]


def test_generate_income_statement_has_the_seed_shape_and_summary(call_tool, books):
    result = call_tool("generate_income_statement", {"startDate": "2024-04-01", "endDate": "2025-03-31"})
    _check("generate_income_statement", result)
    assert result["period"] == SEED_RESPONSES["generate_income_statement"]["period"]
    assert result["summary"] == SEED_RESPONSES["generate_income_statement"]["summary"]


@pytest.mark.parametrize(
    ("lines", "code"),
    [
        ([{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 9000}], 409),
        ([{"accountCode": "999", "debitAmount": 100}, {"accountCode": "100", "creditAmount": 100}], 404),
    ],
    ids=["貸借不一致 409 Conflict", "存在しない勘定科目 404 Not Found"],
)
def test_seed_error_codes(call_tool, chart, lines, code):
    with pytest.raises(ApplicationError) as caught:
        call_tool("create_journal_entry", {"date": "2024-01-15", "description": "商品仕入", "lines": lines})
    assert jsonrpc_code(caught.value) == code
    assert isinstance(caught.value.message, str) and caught.value.message


@pytest.mark.django_db(transaction=True)
def test_mcp_tools_call_answers_the_seed_shape(mcp_client):
    """The seed's `tools/call` of list_accounts over MCP: structuredContent is the seed's result."""
    from ledger import seeding

    seeding.chart_of_accounts_ensure()

    async def called(client):
        await client.list_tools()
        return await client.call_tool("list_accounts", {})

    result = mcp_client("ledger", called)
    assert result.is_error is False
    _check("list_accounts", result.structured_content)
    assert json.loads(result.content[0].text) == result.structured_content
