"""Staff pages in a real browser: creating an API key shows it once; tool calls are listed."""

import json
import time

import pytest
from django.contrib.staticfiles.handlers import StaticFilesHandlerMixin

from mcpsite.mcp.auth import api_key_authenticate
from mcpsite.models import ApiKey, ToolCall


def create_key(page, live_server, scopes=("reminders:read", "reminders:write")):
    """Adds a key through the admin's form; returns the raw key the created page shows."""
    page.goto(f"{live_server.url}/admin/mcpsite/apikey/add/")
    page.fill("#id_name", "voice client")
    page.select_option("#id_owner", label="staff")
    for scope in scopes:
        page.check(f"input[name=scopes][value='{scope}']")
    page.click("input[name=_save]")
    return page.input_value("#new-api-key")


@pytest.mark.django_db(transaction=True)
def test_staff_give_a_key_a_groups_read_without_its_write(admin_login, live_server):
    """One box per group and mode, under the group's name; the change form shows what the key holds."""
    page = admin_login()
    page.goto(f"{live_server.url}/admin/mcpsite/apikey/add/")
    assert "読み取り" in page.locator(".field-scopes").inner_text()
    raw = create_key(page, live_server, scopes=("ledger:read",))
    key = api_key_authenticate(raw_key=raw)
    assert key.scopes == ["ledger:read"] and key.allows("ledger", "read") and not key.allows("ledger", "write")
    ApiKey.objects.filter(pk=key.pk).update(scopes=["cinema", "ledger:read"])
    page.goto(f"{live_server.url}/admin/mcpsite/apikey/{key.pk}/change/")
    checked = page.eval_on_selector_all("input[name=scopes]:checked", "els => els.map(e => e.value)")
    assert checked == ["cinema:read", "cinema:write", "ledger:read"]
    page.screenshot(path="/tmp/mcpsite-admin-key-scopes.png", full_page=True)


@pytest.mark.django_db(transaction=True)
def test_admin_creates_a_key_shown_once_and_lists_tool_calls(admin_login, live_server, django_user_model):
    page = admin_login()
    raw = create_key(page, live_server)
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
    # A reload shows the key no more and makes no second key.
    page.reload()
    assert page.locator("#new-api-key").count() == 0 and raw not in page.content()
    assert ApiKey.objects.count() == 1

    page.click("text=APIキー一覧に戻る")
    assert key.prefix in page.locator("#result_list").inner_text()
    assert raw not in page.content()  # shown once: the list and later pages have only the prefix

    ToolCall.objects.create(api_key=key, transport="ws", tool="calendar.create", outcome="ok", request_id="abc123")
    page.goto(f"{live_server.url}/admin/mcpsite/toolcall/?transport__exact=ws")
    page.screenshot(path="/tmp/mcpsite-admin-toolcalls.png", full_page=True)
    assert "calendar.create" in page.locator("#result_list").inner_text()
    assert ApiKey.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_copy_click_before_the_script_has_loaded_is_not_lost(admin_login, live_server, monkeypatch):
    """The copy buttons stay disabled until copy-button.js has run, so a click while it is still loading waits
    rather than doing nothing (the page is usable before its deferred script, more so on a slow link)."""
    serve = StaticFilesHandlerMixin.serve

    def slow_serve(handler, request):
        if request.path.endswith("copy-button.js"):
            time.sleep(2)
        return serve(handler, request)

    monkeypatch.setattr(StaticFilesHandlerMixin, "serve", slow_serve)
    page = admin_login()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    raw = create_key(page, live_server)
    assert page.is_disabled("button[data-copy=new-api-key]")  # the script is still on its way
    page.click("button[data-copy=new-api-key]")  # waits for the button to be enabled
    page.wait_for_selector("text=コピーしました")
    assert page.evaluate("navigator.clipboard.readText()") == raw
