"""API keys, the health check, the audit log and the create_api_key command."""

import io

import pytest
from django.core.management import CommandError, call_command

from mcpsite.core.errors import ScopeDenied, Unauthorized
from mcpsite.mcp import dispatch
from mcpsite.mcp.auth import api_key_authenticate
from mcpsite.mcp.registry import CallContext
from mcpsite.models import ApiKey, ToolCall, key_digest

pytestmark = pytest.mark.django_db


def test_key_is_stored_only_as_a_digest(api_key):
    key, raw = api_key
    stored = ApiKey.objects.get(pk=key.pk)
    assert stored.digest == key_digest(raw) and raw not in (stored.digest, stored.prefix, str(stored.scopes))
    assert api_key_authenticate(raw_key=raw) == stored


def test_unknown_and_inactive_keys_are_refused(api_key):
    key, raw = api_key
    with pytest.raises(Unauthorized):
        api_key_authenticate(raw_key=raw + "x")
    ApiKey.objects.filter(pk=key.pk).update(is_active=False)
    with pytest.raises(Unauthorized):
        api_key_authenticate(raw_key=raw)


def test_create_api_key_command_prints_the_key_once():
    out = io.StringIO()
    call_command("create_api_key", "--name", "N", "--scopes", "cinema,ledger", "--quiet", stdout=out)
    raw = out.getvalue().strip()
    key = api_key_authenticate(raw_key=raw)
    assert key.scopes == ["cinema", "ledger"] and key.owner.username == "demo"
    assert not key.owner.has_usable_password()


def test_create_api_key_rejects_unknown_scopes():
    with pytest.raises(CommandError, match="Unknown scope"):
        call_command("create_api_key", "--name", "N", "--scopes", "cinema,shop")


def test_scope_denial_is_audited(make_api_key):
    key, _raw = make_api_key(scopes=["ledger"])
    ctx = CallContext(transport="test", request_id="r1", api_key=key, owner=key.owner)
    with pytest.raises(ScopeDenied):
        dispatch.call_tool(ctx, "test_echo", {"text": "a"})
    assert ToolCall.objects.get().outcome == "denied"


def test_healthz_reports_database_and_cache(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "cache": "ok"}}


def test_system_check_refuses_a_bad_rate(settings):
    from mcpsite.checks import check_platform_settings

    settings.MCP_DEFAULT_RATE = "lots"
    assert [e.id for e in check_platform_settings(None)] == ["mcpsite.E001"]


def test_prune_tool_calls_keeps_recent_records():
    from datetime import timedelta

    from django.utils import timezone

    old = ToolCall.objects.create(transport="http", tool="a", outcome="ok", request_id="old")
    ToolCall.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=91))
    ToolCall.objects.create(transport="http", tool="b", outcome="ok", request_id="new")
    out = io.StringIO()
    call_command("prune_tool_calls", "--days", "90", stdout=out)
    assert "ツール呼び出し記録を 1 件削除しました" in out.getvalue()  # staff output, in LANGUAGE_CODE (ja)
    assert list(ToolCall.objects.values_list("request_id", flat=True)) == ["new"]
    with pytest.raises(CommandError):
        call_command("prune_tool_calls", "--days", "0")


def test_every_product_tool_says_whether_it_writes():
    """Clients auto-approve read-only tools; MCP's default for a non-read-only tool is destructive."""
    from mcpsite.mcp import registry

    for spec in registry.tools():
        if spec.name.startswith("test_"):
            continue
        assert "readOnlyHint" in spec.annotations or "destructiveHint" in spec.annotations, spec.name


READS = {"readOnlyHint": True, "openWorldHint": False}
WRITES = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False}
TRUE_ANNOTATIONS = {
    **dict.fromkeys(
        [
            "get_movie_list",
            "get_show_schedule",
            "get_movie_popularity",
            "get_seat_availability",
            "suggest_seats",
            "get_reservation_details",
            "get_account_balance",
            "list_accounts",
            "generate_balance_sheet",
            "generate_income_statement",
            "search_products",
            "check_inventory",
            "build_cart_mandates",
        ],
        READS,
    ),  # fmt: skip
    "reserve_seats": WRITES,
    "create_journal_entry": WRITES,
    "calendar.create": WRITES,
    # Cancelling ends a booking (its seats go back on sale); a second cancel changes nothing more.
    "cancel_reservation": {**WRITES, "destructiveHint": True, "idempotentHint": True},
    # A message to a person cannot be taken back: clients must confirm first, as the reminders seed's flow does.
    "message.send": {**WRITES, "destructiveHint": True, "openWorldHint": True},
    # Its MCP Apps card's Send: sends the confirmed message, and one card sends once however often it is pressed.
    "message.confirm_send": {**WRITES, "destructiveHint": True, "idempotentHint": True, "openWorldHint": True},
    # Adds a reminder (nothing lost), later delivered by mail, SMS or webhook: the world outside is reached.
    "reminder.create": {**WRITES, "openWorldHint": True},
    "resolve_points": {"readOnlyHint": True, "openWorldHint": True},  # asks GaluchatAPI
}


def test_every_tools_annotations_say_truthfully_what_it_does():
    from mcpsite.mcp import registry

    product = {spec.name: spec.annotations for spec in registry.tools() if not spec.name.startswith("test_")}
    assert product == TRUE_ANNOTATIONS


def test_every_error_kind_has_one_place_on_the_wire():
    """The transport's one table covers every kind the core defines, so no error can reach a client unmapped."""
    from mcpsite.core.errors import ErrorKind
    from mcpsite.mcp.wire import WIRE

    assert set(WIRE) == set(ErrorKind)


def test_tool_groups_are_declared_by_the_apps_themselves(settings):
    """Each app's AppConfig names its group and the permissions to grant it: no platform file lists the apps."""
    from django.apps import apps

    from mcpsite.core.scopes import scope_permissions, tool_groups
    from mcpsite.mcp import registry

    assert tool_groups() == ("cinema", "ledger", "geo", "merchant", "reminders")
    assert set(scope_permissions()) == set(tool_groups())
    assert apps.get_app_config("geo").mcp_tool_group == "geo"
    assert {spec.group for spec in registry.tools()} == set(tool_groups())
    with pytest.raises(ValueError, match="Unknown tool group 'nowhere'"):
        registry.register(registry.ToolSpec(name="t", group="nowhere", description="", input_schema={}, func=None))


def test_a_tool_takes_its_group_from_the_app_that_defines_it():
    """`@tool` names no group: each tool's is the `mcp_tool_group` of the AppConfig whose package holds its function."""
    from django.apps import apps

    from mcpsite.mcp import registry

    # The throwaway tools of mcpsite/tests register ToolSpecs directly, under a group they choose.
    specs = [spec for spec in registry.tools() if not spec.func.__module__.startswith("mcpsite.tests.")]
    assert len(specs) >= 21
    for spec in specs:
        assert spec.group == apps.get_containing_app_config(spec.func.__module__).mcp_tool_group, spec.name


def test_a_tool_outside_any_tool_app_is_refused_with_the_fix():
    """A tool defined where no app declares a group (here the platform's own package) fails at import, naming the
    AppConfig attribute to set, and registers nothing."""
    from mcpsite.mcp import registry

    def stray(args, ctx):
        return {}

    stray.__module__ = "mcpsite.somewhere"
    with pytest.raises(ValueError, match="mcpsite.somewhere is in app 'mcpsite', which declares no mcp_tool_group"):
        registry.tool(name="stray_tool", description="", input_schema={"type": "object"})(stray)
    stray.__module__ = "not_an_installed_app.tools"
    with pytest.raises(ValueError, match="not_an_installed_app.tools is in no installed app"):
        registry.tool(name="stray_tool", description="", input_schema={"type": "object"})(stray)
    assert registry.get("stray_tool") is None
