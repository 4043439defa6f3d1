"""Staff pages in a real browser: creating an API key shows it once; tool calls are listed."""

import json

import pytest

from mcpsite.mcp.auth import api_key_authenticate
from mcpsite.models import ApiKey, ToolCall


@pytest.mark.django_db(transaction=True)
def test_admin_creates_a_key_shown_once_and_lists_tool_calls(admin_login, live_server, django_user_model):
    page = admin_login()
    page.goto(f"{live_server.url}/admin/mcpsite/apikey/add/")
    page.fill("#id_name", "voice client")
    page.select_option("#id_owner", label="staff")
    page.check("input[name=scopes][value=reminders]")
    page.click("input[name=_save]")
    raw = page.input_value("#new-api-key")
    key = api_key_authenticate(raw_key=raw)
    assert key.name == "voice client" and key.scopes == ["reminders"]
    config = json.loads(page.input_value("#client-config"))
    assert config["mcpServers"]["mcpsite"] == {
        "type": "http",
        "url": f"{live_server.url}/mcp",
        "headers": {"Authorization": f"Bearer {raw}"},
    }
    # The copy button puts the key on the clipboard and says so.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.click("button[data-copy=new-api-key]")
    page.wait_for_selector("text=コピーしました")
    assert page.evaluate("navigator.clipboard.readText()") == raw
    page.screenshot(path="/tmp/mcpsite-admin-key-created.png", full_page=True)
    assert all(raw not in cookie["value"] for cookie in page.context.cookies())  # not parked in a cookie

    page.click("text=APIキー一覧に戻る")
    assert key.prefix in page.locator("#result_list").inner_text()
    assert raw not in page.content()  # shown once: the list and later pages have only the prefix

    ToolCall.objects.create(api_key=key, transport="ws", tool="calendar.create", outcome="ok", request_id="abc123")
    page.goto(f"{live_server.url}/admin/mcpsite/toolcall/?transport__exact=ws")
    page.screenshot(path="/tmp/mcpsite-admin-toolcalls.png", full_page=True)
    assert "calendar.create" in page.locator("#result_list").inner_text()
    assert ApiKey.objects.count() == 1
