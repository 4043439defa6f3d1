"""Resources, prompts and completion through the official client (in process, against the real SDK server):
capabilities, scoping by the key's groups exactly like tools, pagination, and specific protocol errors."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference, ResourceTemplateReference

from mcpsite.core.scopes import tool_groups
from mcpsite.mcp import prompts, registry, resources
from mcpsite.mcp.features import RESOURCE_NOT_FOUND

pytestmark = pytest.mark.django_db(transaction=True)

ALL_RESOURCES = {"mcpsite://cinema/movies", "mcpsite://ledger/accounts", "mcpsite://reminders/calendar.ics"}
ALL_TEMPLATES = {
    "mcpsite://cinema/schedules/{schedule_id}/seats",
    "mcpsite://ledger/balance-sheet/{asOfDate}",
    "mcpsite://merchant/products/{product_id}",
}
ALL_PROMPTS = {"book_seats_for_film", "month_end_check", "gift_under_budget", "repeating_reminder"}


def test_capabilities_declare_resources_subscribe_prompts_and_completions(mcp_run):
    async def scenario(client):
        return client.server_capabilities

    capabilities = mcp_run(scenario)
    assert capabilities.resources is not None and capabilities.resources.subscribe is True
    assert capabilities.prompts is not None
    assert capabilities.completions is not None


def test_without_a_session_to_notify_subscribe_is_not_offered(mcp_run):
    """Stateless HTTP builds the server with subscriptions=False: the capability says so."""
    import anyio
    from mcp import Client

    from mcpsite.mcp import dispatch
    from mcpsite.mcp.server import build_server

    async def scenario():
        server = build_server(lambda _ctx: (dispatch.call_context(transport="test"), None))
        async with Client(server, mode="legacy", cache=None) as client:
            return client.server_capabilities.resources

    assert anyio.run(scenario).subscribe is False


def test_everything_is_listed_for_a_key_with_every_scope(mcp_run, api_key):
    key, _raw = api_key

    async def scenario(client):
        listed = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        return listed, templates, (await client.list_prompts()).prompts

    listed, templates, prompt_list = mcp_run(scenario, api_key=key)
    assert {str(r.uri) for r in listed} == ALL_RESOURCES  # no shows yet: no seat maps listed
    assert {t.uri_template for t in templates} == ALL_TEMPLATES
    assert {p.name for p in prompt_list} == ALL_PROMPTS


def test_a_key_sees_only_the_resources_and_prompts_of_its_scopes(mcp_run, make_api_key):
    key, _raw = make_api_key(scopes=["cinema"])

    async def scenario(client):
        listed = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        prompt_list = (await client.list_prompts()).prompts
        with pytest.raises(MCPError) as read_denied:
            await client.read_resource("mcpsite://ledger/accounts")
        with pytest.raises(MCPError) as prompt_denied:
            await client.get_prompt("month_end_check", {"month": "2026-01"})
        hidden = await client.complete(
            ResourceTemplateReference(uri="mcpsite://merchant/products/{product_id}"),
            {"name": "product_id", "value": ""},
        )
        return listed, templates, prompt_list, read_denied.value, prompt_denied.value, hidden

    listed, templates, prompt_list, read_denied, prompt_denied, hidden = mcp_run(scenario, api_key=key)
    assert {str(r.uri) for r in listed} == {"mcpsite://cinema/movies"}
    assert {t.uri_template for t in templates} == {"mcpsite://cinema/schedules/{schedule_id}/seats"}
    assert {p.name for p in prompt_list} == {"book_seats_for_film"}
    assert read_denied.error.code == 403 and "ledger" in read_denied.error.message
    assert prompt_denied.error.code == 403
    assert hidden.completion.values == []


def test_a_group_endpoint_does_not_know_other_groups_resources(mcp_run):
    async def scenario(client):
        with pytest.raises(MCPError) as excinfo:
            await client.read_resource("mcpsite://ledger/accounts")
        return excinfo.value, (await client.list_prompts()).prompts

    error, prompt_list = mcp_run(scenario, groups=["cinema"])
    assert error.error.code == RESOURCE_NOT_FOUND
    assert [p.name for p in prompt_list] == ["book_seats_for_film"]


def test_unknown_resource_uri_is_resource_not_found(mcp_run):
    async def scenario(client):
        with pytest.raises(MCPError) as excinfo:
            await client.read_resource("mcpsite://cinema/nothing-here")
        return excinfo.value

    error = mcp_run(scenario)
    assert error.error.code == RESOURCE_NOT_FOUND
    assert error.error.data == {"uri": "mcpsite://cinema/nothing-here"}


def test_lists_are_paginated_and_every_entry_comes_once(mcp_run, settings):
    settings.MCP_PAGE_SIZE = 2

    async def walk(list_page, attribute):
        seen, cursor, pages = [], None, 0
        while True:
            page = await list_page(cursor=cursor)
            seen += getattr(page, attribute)
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                return seen, pages

    async def scenario(client):
        return (
            await walk(client.list_resources, "resources"),
            await walk(client.list_resource_templates, "resource_templates"),
            await walk(client.list_prompts, "prompts"),
        )

    (listed, r_pages), (templates, t_pages), (prompt_list, p_pages) = mcp_run(scenario)
    assert sorted(str(r.uri) for r in listed) == sorted(ALL_RESOURCES) and r_pages == 2
    assert sorted(t.uri_template for t in templates) == sorted(ALL_TEMPLATES) and t_pages == 2
    assert sorted(p.name for p in prompt_list) == sorted(ALL_PROMPTS) and p_pages == 2


@pytest.mark.parametrize("cursor", ["not-a-cursor", "by0x", "!!!", "b-1"])
def test_a_bad_cursor_is_a_specific_invalid_params_error(mcp_run, cursor):
    async def scenario(client):
        with pytest.raises(MCPError) as excinfo:
            await client.list_prompts(cursor=cursor)
        return excinfo.value

    error = mcp_run(scenario)
    assert error.error.code == registry_invalid_params() and error.error.message == "Invalid cursor"


def registry_invalid_params() -> int:
    from mcpsite.mcp.wire import INVALID_PARAMS

    return INVALID_PARAMS


def test_prompt_arguments_are_checked_by_name(mcp_run):
    async def scenario(client):
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("gift_under_budget", {"recipient": "母"})
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("gift_under_budget", {"recipient": "母", "budget_jpy": "5000", "colour": "red"})
        with pytest.raises(MCPError) as no_prompt:
            await client.get_prompt("no_such_prompt", {})
        return missing.value, unknown.value, no_prompt.value

    missing, unknown, no_prompt = mcp_run(scenario)
    assert missing.error.code == -32602 and "missing required argument(s): budget_jpy" in missing.error.message
    assert unknown.error.code == -32602 and "unknown argument(s): colour" in unknown.error.message
    assert no_prompt.error.code == -32602 and "Unknown prompt: no_such_prompt" in no_prompt.error.message


def test_completion_of_unknown_references_is_empty_not_an_error(mcp_run):
    """Clients complete while the user types; the conformance suite completes its own reference prompt."""

    async def scenario(client):
        prompt = await client.complete(
            PromptReference(name="test_prompt_with_arguments"), {"name": "arg1", "value": "x"}
        )
        template = await client.complete(ResourceTemplateReference(uri="x://{y}"), {"name": "y", "value": ""})
        return prompt.completion, template.completion

    for completion in mcp_run(scenario):
        assert completion.values == [] and completion.total == 0 and completion.has_more is False


def test_every_prompt_names_only_real_tools():
    """Each prompt's text uses the tool names agents will find in tools/list (rendered with sample arguments)."""
    import re

    samples = {
        "book_seats_for_film": {"title": "スタームービー", "date": "2026-02-20", "count": "2"},
        "month_end_check": {"month": "2026-01", "accountCode": "1000"},
        "gift_under_budget": {"recipient": "母の誕生日", "budget_jpy": "8000", "keyword": "お茶"},
        "repeating_reminder": {"note": "薬を飲む", "first_time": "2026-12-01T07:30", "repeat": "daily"},
    }
    tool_names = {spec.name for spec in registry.tools()}
    for spec in prompts.prompts(tool_groups()):
        text = spec.render(samples[spec.name])
        mentioned = set(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b|\b[a-z]+\.[a-z]+\b", text)) - set(samples[spec.name])
        named_tools = {m for m in mentioned if m in tool_names or "_" in m and m.split("_")[0] in {"get", "list"}}
        assert named_tools, spec.name
        assert named_tools <= tool_names, (spec.name, named_tools - tool_names)
        assert {a.name for a in spec.arguments} >= set(samples[spec.name])


def test_resource_templates_complete_only_their_own_variables():
    with pytest.raises(ValueError, match="unknown variables"):
        resources.resource_template(
            uri_template="mcpsite://cinema/x/{a}", name="x", group="cinema", description="x", complete={"b": None}
        )(lambda variables, ctx: "")


def test_resource_reads_are_audited_as_tool_calls_are(mcp_run, make_api_key, settings):
    """A read can hold what a tool returns (the chart of accounts, a balance sheet): staff see who read which
    resource and how it ended, read, refused by the key's scopes, or not found; never what was read."""
    from mcpsite.models import ToolCall

    settings.MCP_AUDIT_FLUSH_SECONDS = 0  # written as each read ends
    key, _raw = make_api_key(scopes=["ledger"])

    async def scenario(client):
        await client.read_resource("mcpsite://ledger/accounts")
        for uri in ("mcpsite://cinema/movies", "mcpsite://ledger/nothing-here"):
            with pytest.raises(MCPError):
                await client.read_resource(uri)

    mcp_run(scenario, api_key=key)
    rows = list(ToolCall.objects.order_by("pk").values_list("api_key", "tool", "outcome", "error_code"))
    assert rows == [
        (key.pk, "resources/read chart-of-accounts", "ok", ""),
        (key.pk, "resources/read movies", "denied", "403"),
        (key.pk, "resources/read", "error", str(RESOURCE_NOT_FOUND)),
    ]
