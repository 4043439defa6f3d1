"""Least privilege: scopes per group and mode (`<group>:read`, `<group>:write`, the bare `<group>` for both), every
tool's mode from its annotations, and every door refusing what a read-only key may not do and listing only what it
may."""

from __future__ import annotations

import ast
import inspect
import io
import json
import textwrap
import types

import pytest
from django.core.management import CommandError, call_command

from cinema import services as cinema_services
from mcpsite.core import scopes
from mcpsite.core.errors import ScopeDenied
from mcpsite.mcp import dispatch, registry
from mcpsite.mcp.registry import READ_ONLY, CallContext, ToolSpec
from mcpsite.mcp.stdio import serve_stdio
from mcpsite.models import ApiKey, ToolCall

from .transports import Transports, message

# --- the rules, in one place (mcpsite/core/scopes.py) -------------------------------------------------------------


def test_a_bare_group_is_both_modes_and_a_moded_scope_one():
    assert scopes.scopes_allow(["ledger"], "ledger", scopes.READ) and scopes.scopes_allow(["ledger"], "ledger", "write")
    assert scopes.scopes_allow(["ledger:read"], "ledger", scopes.READ)
    assert not scopes.scopes_allow(["ledger:read"], "ledger", scopes.WRITE)
    assert not scopes.scopes_allow(["ledger:write"], "ledger", scopes.READ)
    assert scopes.scopes_allow(["ledger:write"], "ledger")  # any of the group's tools
    assert not scopes.scopes_allow(["cinema"], "ledger")


def test_scopes_are_validated_compacted_and_expanded():
    assert scopes.all_scopes()[:3] == ("cinema", "cinema:read", "cinema:write")
    assert scopes.scopes_validate(["ledger:read", "cinema", "ledger:read"]) == ["cinema", "ledger:read"]
    with pytest.raises(ValueError, match="Unknown scope.*ledger:admin"):
        scopes.scopes_validate(["ledger:admin"])
    assert scopes.scopes_compact(["ledger:read", "ledger:write", "geo:read"]) == ["ledger", "geo:read"]
    assert scopes.scopes_expand(["ledger", "geo:write"]) == ["ledger:read", "ledger:write", "geo:write"]
    assert scopes.scopes_cover(["ledger"], ["ledger:read"]) and not scopes.scopes_cover(["ledger:read"], ["ledger"])


def test_a_tools_mode_follows_its_annotations():
    assert scopes.tool_mode(READ_ONLY) == scopes.READ
    assert scopes.tool_mode({"readOnlyHint": False}) == scopes.WRITE
    assert scopes.tool_mode({}) == scopes.WRITE  # MCP's default: not read-only


@pytest.mark.django_db
def test_create_api_key_takes_modes_per_group():
    out = io.StringIO()
    call_command("create_api_key", "--name", "N", "--scopes", "ledger:read,cinema,geo:read,geo:write", stdout=out)
    assert ApiKey.objects.get().scopes == ["cinema", "ledger:read", "geo"]
    with pytest.raises(CommandError, match="Unknown scope.*ledger:admin"):
        call_command("create_api_key", "--name", "N", "--scopes", "ledger:admin")


# --- every tool's mode against what it does -------------------------------------------------------------------------

# The tools that change something (their annotations say readOnlyHint false). A tool moving in or out of this list is
# a change to what a read-only key may do: decide it here, on purpose.
WRITERS = {
    "reserve_seats",
    "cancel_reservation",
    "create_journal_entry",
    "calendar.create",
    "message.send",
    "message.confirm_send",
    "reminder.create",
}
# Functions of a services module that read-only tools may call, each with why it does not make the tool a writer.
READS_THROUGH_SERVICES = {
    # Checks a reservation's password; what it writes is the wrong-password throttle, not the reservation.
    "cinema.services.reservation_authenticate",
    # Formats an amount of yen.
    "ledger.services.yen",
}


def services_called(func, seen: set | None = None) -> set[str]:
    """The functions of a `services` module (an app's writes) that `func` reaches: by name, by `services.<name>`, and
    through the helpers of its own module."""
    seen = set() if seen is None else seen
    if func in seen:
        return set()
    seen.add(func)
    found: set[str] = set()
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    names = func.__globals__
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = names.get(node.value.id)
            if isinstance(module, types.ModuleType) and module.__name__.endswith(".services"):
                target = getattr(module, node.attr, None)
        elif isinstance(node, ast.Name):
            target = names.get(node.id)
        if not isinstance(target, types.FunctionType):
            continue
        if target.__module__.endswith(".services"):
            found.add(f"{target.__module__}.{target.__name__}")
        elif target.__module__ == func.__module__:
            found |= services_called(target, seen)
    return found


def writes(spec: ToolSpec) -> bool:
    return bool(services_called(spec.func) - READS_THROUGH_SERVICES)


def _books(args, ctx):
    """A tool that books seats: it calls a writing service."""
    return cinema_services.reservation_create(schedule_id=args["schedule_id"], seats=args["seats"], password="x")


def test_the_rule_finds_a_writing_tool_marked_read_only():
    """The control: a tool that books seats, annotated read-only, is found out by the rule."""
    spec = ToolSpec("test_books", "cinema", "Books", {"type": "object"}, _books, annotations=READ_ONLY)
    assert writes(spec) and spec.mode == scopes.READ


def test_no_writing_tool_is_marked_read_only():
    """Each tool reaching a writing service is a write tool by its annotations, and the write tools are exactly the
    declared writers: a read-only key (`<group>:read`) never changes anything."""
    product = [spec for spec in registry.tools() if not spec.name.startswith("test_")]
    misread = [spec.name for spec in product if writes(spec) and spec.mode == scopes.READ]
    assert misread == []
    assert {spec.name for spec in product if spec.mode == scopes.WRITE} == WRITERS
    # MCP's hints agree: a read-only tool is never destructive.
    assert not [s.name for s in product if s.mode == scopes.READ and s.annotations.get("destructiveHint")]


# --- enforced in the authorize stage, audited with the scope ---------------------------------------------------------


@pytest.mark.django_db
def test_a_read_only_key_is_refused_a_writing_tool_naming_the_scope(make_api_key):
    key, _raw = make_api_key(scopes=["cinema:read"])
    ctx = CallContext(transport="test", request_id="r1", api_key=key, owner=key.owner)
    with pytest.raises(ScopeDenied) as denied:
        dispatch.call_tool(ctx, "reserve_seats", {"schedule_id": "s001", "seats": ["A1"], "password": "x"})
    assert denied.value.scope == "cinema:write"
    assert denied.value.message == "This API key may not use cinema tools that write"
    assert denied.value.data == "Scope 'cinema:write' required"
    assert ToolCall.objects.get().outcome == ToolCall.Outcome.DENIED
    assert dispatch.call_tool(ctx, "get_movie_list", {}).data == {"movies": []}
    # The audit names the scope that allowed each call, or that the key lacked.
    audited = ToolCall.objects.order_by("created_at").values_list("tool", "outcome", "scope")
    assert list(audited) == [("reserve_seats", "denied", "cinema:write"), ("get_movie_list", "ok", "cinema:read")]
    key.scopes = ["cinema"]
    dispatch.call_tool(ctx, "get_movie_list", {})
    assert ToolCall.objects.order_by("created_at").last().scope == "cinema"


# --- every door with a read-only key ----------------------------------------------------------------------------------

READ_TOOL, WRITE_TOOL = "get_movie_list", "reserve_seats"
RESERVE = {"schedule_id": "s001", "seats": ["A1"], "password": "pass1234"}


def _names(entries: list[dict]) -> set[str]:
    return {entry["name"] for entry in entries}


def _stdio(raw_key: str, sent: dict) -> dict:
    from mcpsite.mcp.auth import api_key_authenticate

    output = io.StringIO()
    key = api_key_authenticate(raw_key=raw_key)
    serve_stdio(groups=None, api_key=key, stdin=io.StringIO(json.dumps(sent) + "\n"), stdout=output)
    return json.loads(output.getvalue().splitlines()[0])


def _mcp_answer(door: str, raw: str, http_post, sent: dict) -> dict:
    if door == "stdio":
        return _stdio(raw, sent)
    transports = Transports(raw, http_post)
    if door == "rpc":
        return http_post("/rpc", sent, raw_key=raw).json()
    if door == "ws":
        return transports.ws(None, sent)[1]
    return getattr(transports, door)("/mcp", sent)[1]


MCP_DOORS = ["mcp", "mcp_2026", "stdio", "ws", "rpc"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("door", MCP_DOORS)
def test_each_door_lists_only_the_read_tools_of_a_read_only_key(make_api_key, http_post, door):
    _key, raw = make_api_key(scopes=["cinema:read", "ledger"])
    listed = _names(_mcp_answer(door, raw, http_post, message("tools/list", {}))["result"]["tools"])
    assert READ_TOOL in listed and "create_journal_entry" in listed  # ledger: both modes
    assert WRITE_TOOL not in listed and "cancel_reservation" not in listed
    assert not listed & {"resolve_points", "search_products"}  # groups it holds nothing of


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("door", MCP_DOORS)
def test_each_door_refuses_a_writing_tool_to_a_read_only_key(make_api_key, http_post, door):
    _key, raw = make_api_key(scopes=["cinema:read"])
    answer = _mcp_answer(door, raw, http_post, message("tools/call", {"name": WRITE_TOOL, "arguments": RESERVE}))
    if door in ("rpc", "ws"):
        refused = answer["error"]
    else:  # MCP: the refusal is the tool's result, isError
        assert answer["result"]["isError"] is True
        refused = answer["result"]["structuredContent"]
    assert refused["code"] == 403 and refused["data"] == "Scope 'cinema:write' required"
    called = _mcp_answer(door, raw, http_post, message("tools/call", {"name": READ_TOOL, "arguments": {}}))
    assert "error" not in called and not called["result"].get("isError")
    assert list(ToolCall.objects.order_by("created_at").values_list("outcome", flat=True)) == ["denied", "ok"]


@pytest.mark.django_db
def test_rest_refuses_a_writing_tool_to_a_read_only_key_and_lists_the_rest(make_api_key, http_post):
    _key, raw = make_api_key(scopes=["cinema:read"])
    refused = http_post("/mcp/tools/call", {"name": WRITE_TOOL, "arguments": RESERVE}, raw_key=raw)
    assert refused.status_code == 403 and refused.json()["error"]["data"] == "Scope 'cinema:write' required"
    listed = _names(http_post("/mcp/cinema/tools/list", {}, raw_key=raw).json()["tools"])
    assert READ_TOOL in listed and WRITE_TOOL not in listed


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("door", ["mcp", "mcp_2026", "stdio"])
def test_resources_and_prompts_need_the_read_scope(make_api_key, http_post, door):
    """Resources and prompts read: a write-only key sees and reads none of its group's; a read-only key all."""
    _writer, write_only = make_api_key(name="writer", scopes=["cinema:write"])
    _reader, read_only = make_api_key(name="reader", scopes=["cinema:read"])
    for raw, shown in ((write_only, False), (read_only, True)):
        resources = _mcp_answer(door, raw, http_post, message("resources/list", {}))["result"]["resources"]
        prompts = _mcp_answer(door, raw, http_post, message("prompts/list", {}))["result"]["prompts"]
        assert ("movies" in _names(resources)) is shown and ("book_seats_for_film" in _names(prompts)) is shown
    if door != "mcp_2026":  # (a 2026-07-28 resources/read also names its URI in a header the helper does not send)
        uri = {"uri": "mcpsite://cinema/movies"}
        read = _mcp_answer(door, write_only, http_post, message("resources/read", uri))
        assert read["error"]["code"] == 403 and read["error"]["data"] == "Scope 'cinema:read' required"


@pytest.mark.django_db
def test_mcp_stdio_serves_as_an_api_key(make_api_key, monkeypatch):
    _key, raw = make_api_key(scopes=["cinema:read"])
    monkeypatch.setenv("MCP_TEST_KEY", "mcp_not-a-key")
    with pytest.raises(CommandError, match="MCP_TEST_KEY: Invalid API key"):
        call_command("mcp_stdio", "--api-key-env", "MCP_TEST_KEY")


def test_the_permission_table_in_docs_security_names_each_scopes_tools():
    """docs/security.md's table lists, for each `<group>:<mode>` scope, exactly the tools of that group and mode."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    for group in scopes.tool_groups():
        for mode in scopes.MODES:
            row = re.search(rf"^\| `{group}:{mode}` \| ([^|]*) \|", text, re.M)
            assert row, f"{group}:{mode} has no row"
            documented = set(re.findall(r"`([^`]+)`", row.group(1)))
            actual = {s.name for s in registry.tools([group]) if s.mode == mode and not s.name.startswith("test_")}
            assert documented == actual, (group, mode)
