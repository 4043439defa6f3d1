"""The reminders seed (seeds/innervoice-reminders-mcp.md) as acceptance criteria.

The seed gives TypeScript sketches; transcribed here:

    calendar.create {title: string; start: string; duration_min: number; description?: string; location?: string}
    message.send    {to: string; text: string; platform?: string  // "sms", "email"}
    reminder.create {time: string; note: string; repeat?: string}
    Response        {status: "ok" | "error"; id?: string; error?: string}

and its WebSocket messages (`tools/call` with id "req_123"; 401 and 429 as JSON-RPC errors).
docs/apps/reminders.md documents `platform`'s enum (`email` or `sms`), the seed's own values.
"""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from mcpsite.mcp import registry

from .conftest import future
from .results import assert_error, assert_ok
from .ws_client import exchange, handshake

SEED_PARAMETERS = {
    "calendar.create": {
        "title": ("string", True, "予定タイトル（必須）"),
        "start": ("string", True, "ISO8601形式の開始時刻（必須）"),
        "duration_min": ("number", True, "所要時間（分）（必須）"),
        "description": ("string", False, "説明（オプション）"),
        "location": ("string", False, "場所（オプション）"),
    },
    "message.send": {
        "to": ("string", True, "送信先（名前またはID）（必須）"),
        "text": ("string", True, "メッセージ本文（必須）"),
        "platform": ("string", False, 'プラットフォーム指定（オプション: "sms", "email"）'),
    },
    "reminder.create": {
        "time": ("string", True, "ISO8601形式の通知時刻（必須）"),
        "note": ("string", True, "リマインダーの内容（必須）"),
        "repeat": ("string", False, "繰り返し設定（オプション）"),
    },
}
SEED_SUMMARIES = {"calendar.create": "予定を作成します。", "message.send": "メッセージを送信します。"}
SEED_SUMMARIES["reminder.create"] = "リマインダーを作成します。"
# docs/apps/reminders.md: `platform` is `email` or `sms` (the values the seed's comment names).
DOCUMENTED_ENUMS = {("message.send", "platform"): {"sms", "email"}}

SEED_TOOL_MESSAGE = {
    "jsonrpc": "2.0",
    "id": "req_123",
    "method": "tools/call",
    "params": {
        "name": "calendar.create",
        "arguments": {"title": "朝ラン", "start": "2025-09-19T07:00:00+09:00", "duration_min": 30},
    },
}
SEED_401 = {"jsonrpc": "2.0", "id": "req_123", "error": {"code": 401, "message": "Invalid API key"}}
SEED_429 = {"jsonrpc": "2.0", "id": "req_123", "error": {"code": 429, "message": "Rate limit exceeded"}}


# --- definitions ----------------------------------------------------------------------------------


def test_the_group_is_the_three_seed_tools():
    # Beside them only the MCP Apps message card's Send, which exists for Apps clients' views alone.
    tools = registry.tools(["reminders"])
    assert [spec.name for spec in tools if not spec.app_only] == list(SEED_PARAMETERS)
    assert [spec.name for spec in tools if spec.app_only] == ["message.confirm_send"]


@pytest.mark.parametrize("name", list(SEED_PARAMETERS))
def test_input_schema_is_the_seeds_parameters(name):
    schema = registry.get(name).input_schema
    seed = SEED_PARAMETERS[name]
    assert schema["type"] == "object"
    assert list(schema["properties"]) == list(seed)
    assert schema["required"] == [arg for arg, (_type, required, _d) in seed.items() if required]
    for arg, (type_, _required, description) in seed.items():
        prop = schema["properties"][arg]
        extra = prop.keys() - {"type", "description"}
        assert (prop["type"], prop["description"]) == (type_, description)
        if (name, arg) in DOCUMENTED_ENUMS:
            assert extra == {"enum"} and set(prop["enum"]) == DOCUMENTED_ENUMS[name, arg]
        else:
            assert not extra, f"{name}.{arg}: undocumented schema keys {extra}"
    assert schema.get("additionalProperties", True) is True


@pytest.mark.parametrize("name", list(SEED_PARAMETERS))
def test_description_starts_with_the_seeds(name):
    assert registry.get(name).description.startswith(SEED_SUMMARIES[name])


@pytest.mark.parametrize("name", list(SEED_PARAMETERS))
def test_output_schema_is_the_seed_response(name):
    validator = Draft202012Validator(registry.get(name).output_schema)
    for example in ({"status": "ok", "id": "evt_abc123"}, {"status": "error", "error": "bad start"}):
        validator.validate(example)
    assert not validator.is_valid({"status": "done"})


def test_mcp_tools_list_exposes_the_schemas(mcp_tools_list):
    tools = {tool.name: tool for tool in mcp_tools_list("reminders")}
    assert list(tools) == list(SEED_PARAMETERS)
    for name, tool in tools.items():
        assert tool.input_schema == registry.get(name).input_schema
        assert tool.output_schema == registry.get(name).output_schema


# --- results --------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_every_tool_answers_the_seed_response(call_tool, contacts, immediate_tasks, mailoutbox):
    assert_ok(call_tool("calendar.create", SEED_TOOL_MESSAGE["params"]["arguments"]), "evt_")
    assert_ok(
        call_tool(
            "calendar.create",
            {
                "title": "会議",
                "start": "2025-09-19T10:00:00",
                "duration_min": 60,
                "description": "週次",
                "location": "本社",
            },
        ),
        "evt_",
    )
    assert_ok(call_tool("message.send", {"to": "山田花子", "text": "こんにちは"}), "msg_")
    assert_ok(call_tool("message.send", {"to": "山田花子", "text": "こんにちは", "platform": "email"}), "msg_")
    assert_ok(call_tool("reminder.create", {"time": future().isoformat(), "note": "薬"}), "rem_")
    for repeat in ("hourly", "daily", "weekly", "weekdays", "monthly", "yearly"):  # the words of its description
        arguments = {"time": future().isoformat(), "note": "ラン", "repeat": repeat}
        assert_ok(call_tool("reminder.create", arguments), "rem_")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("calendar.create", {"title": "朝ラン", "start": "tomorrow", "duration_min": 30}),
        ("calendar.create", {"title": "朝ラン", "start": "2025-09-19T07:00:00+09:00"}),  # schema: missing
        ("calendar.create", {"title": "朝ラン", "start": "2025-09-19T07:00:00+09:00", "duration_min": "30"}),
        ("message.send", {"to": "誰もいない", "text": "x"}),
        ("message.send", {"to": "山田花子", "text": "x", "platform": "fax"}),
        ("reminder.create", {"time": "2020-01-01T00:00:00Z", "note": "x"}),
        ("reminder.create", {"time": "2099-01-01T00:00:00Z", "note": "x", "repeat": "sometimes"}),
    ],
)
def test_every_failure_is_the_seed_in_band_error(call_tool, contacts, name, arguments):
    assert_error(call_tool(name, arguments))


# --- the seed's WebSocket messages ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_seed_tool_execution_message_and_response(api_key):
    _key, raw = api_key
    [answer] = exchange(raw, [SEED_TOOL_MESSAGE])[0]
    assert set(answer) == {"jsonrpc", "id", "result"}
    assert (answer["jsonrpc"], answer["id"]) == ("2.0", "req_123")
    assert_ok(answer["result"], "evt_")


@pytest.mark.django_db(transaction=True)
def test_seed_authentication_error():
    """A bad key is refused at the handshake (no socket opens), with the seed's error in the refusal's body."""
    start, body = handshake("mcp_wrong")
    assert start["status"] == 401
    assert {**json.loads(body["body"]), "id": SEED_401["id"]} == SEED_401


@pytest.mark.django_db(transaction=True)
def test_seed_rate_limit_error(make_api_key):
    key, raw = make_api_key(scopes=["reminders"], rate="1/m")
    first, second = exchange(raw, [SEED_TOOL_MESSAGE, SEED_TOOL_MESSAGE])[0]
    assert_ok(first["result"], "evt_")
    assert second == SEED_429
