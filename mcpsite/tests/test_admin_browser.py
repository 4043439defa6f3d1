"""Staff pages in a real browser: creating an API key shows it once; tool calls are listed."""

import re

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
    message = page.locator(".messagelist").inner_text()
    raw = re.search(r"(mcp_\S+)", message).group(1)
    key = api_key_authenticate(raw_key=raw)
    assert key.name == "voice client" and key.scopes == ["reminders"]
    assert raw not in page.locator("#result_list").inner_text()  # the list shows only the prefix

    page.reload()
    assert raw not in page.content()  # shown once

    ToolCall.objects.create(api_key=key, transport="ws", tool="calendar.create", outcome="ok", request_id="abc123")
    page.goto(f"{live_server.url}/admin/mcpsite/toolcall/?transport__exact=ws")
    page.screenshot(path="/tmp/mcpsite-admin-toolcalls.png", full_page=True)
    assert "calendar.create" in page.locator("#result_list").inner_text()
    assert ApiKey.objects.count() == 1
