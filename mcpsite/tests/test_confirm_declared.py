"""Confirmation is a declared property of a tool (`@tool(confirm=True)`), held to its annotations and to its
behaviour; request states are sealed under keys derived from the site's secrets."""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcpsite.mcp import dispatch, registry
from mcpsite.mcp.registry import ToolSpec
from mcpsite.mcp.requeststate import request_state_keys
from mcpsite.mcp.server import build_server

ACTS_OUTSIDE = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
SCHEMA = {"type": "object", "properties": {}}


def spec(name: str, annotations: dict, confirm: bool, func=lambda args, ctx: {"done": True}) -> ToolSpec:
    return ToolSpec(
        name=name, group="reminders", description="x", input_schema=SCHEMA, func=func,
        annotations=annotations, confirm=confirm,
    )  # fmt: skip


def test_only_message_send_asks_for_confirmation():
    # message.confirm_send is its MCP Apps card's Send (app-only): it sends only the confirmed card's message.
    assert [s.name for s in registry.tools() if s.confirm] == ["message.send", "message.confirm_send"]


def test_confirm_is_declared_exactly_for_destructive_open_world_tools():
    with pytest.raises(ValueError, match="annotate it destructive and open-world"):
        registry.register(spec("test_asks_for_nothing", {"openWorldHint": True}, confirm=True))
    with pytest.raises(ValueError, match="declare confirm=True"):
        registry.register(spec("test_acts_unasked", ACTS_OUTSIDE, confirm=False))
    assert registry.get("test_asks_for_nothing") is None and registry.get("test_acts_unasked") is None


@pytest.fixture
def unasking_tool():
    """A tool that declares confirm but never asks: the platform must not let it finish where it could have."""
    registry.register(spec("test_unasking", ACTS_OUTSIDE, confirm=True))
    yield "test_unasking"
    registry.unregister("test_unasking")


@pytest.mark.django_db(transaction=True)
def test_a_confirm_tool_that_did_not_ask_fails_where_it_could_have(unasking_tool, settings):
    settings.MCP_AUDIT_FLUSH_SECONDS = 0

    async def elicit(context, params):
        raise AssertionError("never asked")

    def context_for(_ctx):
        return dispatch.call_context(transport="test"), None

    async def connected(callback):
        async with Client(build_server(context_for), mode="auto", cache=None, elicitation_callback=callback) as c:
            return await c.call_tool(unasking_tool, {})

    could_ask = anyio.run(connected, elicit)
    assert could_ask.is_error and could_ask.structured_content["code"] == -32603
    # A client that cannot answer, and the seed transports (no interaction), get the tool's result.
    cannot_ask = anyio.run(connected, None)
    assert cannot_ask.structured_content == {"done": True}
    assert dispatch.call_tool(dispatch.call_context(transport="rpc"), unasking_tool, {}).data == {"done": True}


def test_request_state_keys_follow_the_secret_and_its_fallbacks(settings):
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "new-" + "s" * 40, ["old-" + "s" * 40, "new-" + "s" * 40]
    new, old = request_state_keys()  # newest first (it seals); the duplicate fallback is one key
    assert len(new) == len(old) == 32 and new != old
    assert settings.SECRET_KEY.encode() not in new  # derived, never the secret itself
    settings.SECRET_KEY_FALLBACKS = []
    assert request_state_keys() == [new]


def test_the_input_required_result_carries_one_form_question():
    from mcpsite.mcp.calls import CONFIRM_SCHEMA, input_required_result
    from mcpsite.mcp.interaction import InputRequired, elicitation_request

    question = elicitation_request("送りますか？", CONFIRM_SCHEMA)
    result = input_required_result(InputRequired({"confirm": question}, "plain"))
    assert isinstance(result, types.InputRequiredResult) and result.request_state == "plain"
    question = result.input_requests["confirm"]
    assert question.params.mode == "form" and question.params.requested_schema == CONFIRM_SCHEMA


@pytest.mark.django_db
def test_a_call_answered_with_a_question_is_not_a_failed_call():
    import datetime

    from django.utils import timezone

    from mcpsite.models import ToolCall
    from mcpsite.selectors import tool_call_stats

    for outcome in ("input_required", "ok", "error"):
        ToolCall.objects.create(transport="http", tool="message.send", outcome=outcome, request_id=outcome)
    (stats,) = tool_call_stats(since=timezone.now() - datetime.timedelta(hours=1), by="tool")
    assert (stats.calls, stats.failed) == (3, 1)


def test_a_state_belongs_to_the_key_or_to_the_oauth_user_and_client():
    """An OAuth token's state survives the token's refresh (same user and client), not a change of client."""
    from types import SimpleNamespace

    from mcpsite.mcp.registry import CallContext
    from mcpsite.mcp.requeststate import principal_of
    from mcpsite_oauth.services import OAuthTokenPrincipal

    user = SimpleNamespace(pk=7)

    def oauth(token_id: int, application_id: int) -> str | None:
        token = OAuthTokenPrincipal(token_id, application_id, user, ("reminders",), "100/m")
        return principal_of(CallContext(transport="http", request_id="r", api_key=token, owner=user))  # type: ignore[arg-type]

    assert oauth(1, 3) == oauth(2, 3) != oauth(1, 4)
    assert principal_of(CallContext(transport="stdio", request_id="r", owner=user)) == "user:7"  # type: ignore[arg-type]
    assert principal_of(CallContext(transport="http", request_id="r")) is None
