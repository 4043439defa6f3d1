"""Multi round-trip (protocol 2026-07-28) for any tool or prompt: `InputRequired` with elicitation, sampling and roots
requests and a state the retry brings back sealed, through the official client in process (its own round-trip
driver, or the rounds by hand)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcpsite.mcp import dispatch, prompts
from mcpsite.mcp.interaction import InputRequired, elicitation_request, roots_request, sampling_request
from mcpsite.mcp.registry import ToolSpec, register, unregister
from mcpsite.mcp.server import build_server

pytestmark = pytest.mark.django_db(transaction=True)

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _everything_at_once(args, ctx) -> dict:
    answers = ctx.interaction.input_responses()
    if ctx.interaction.request_state() != "round 1" or set(answers) != {"name", "model", "roots"}:
        requests = {
            "name": elicitation_request("Your name?", NAME_FORM),
            "model": sampling_request("Say hello", 20),
            "roots": roots_request(),
        }
        raise InputRequired(requests, "round 1")
    return {
        "name": answers["name"]["content"]["name"],
        "model": answers["model"]["content"]["text"],
        "roots": [root["uri"] for root in answers["roots"]["roots"]],
    }


def _two_rounds(args, ctx) -> dict:
    state = ctx.interaction.request_state()
    if state is None:
        raise InputRequired({"first": elicitation_request("First?", NAME_FORM)}, "after first")
    if state == "after first":
        first = ctx.interaction.input_responses()["first"]["content"]["name"]
        raise InputRequired({"second": elicitation_request("Second?", NAME_FORM)}, f"after second:{first}")
    second = ctx.interaction.input_responses()["second"]["content"]["name"]
    return {"answers": [state.removeprefix("after second:"), second]}


def _capabilities(args, ctx) -> dict:
    return {name: ctx.interaction.client_can(name) for name in ("elicitation", "sampling", "roots")}


SPECS = [
    ToolSpec("test_everything_at_once", "cinema", "Asks three things", {"type": "object"}, _everything_at_once),
    ToolSpec("test_two_rounds", "cinema", "Asks twice", {"type": "object"}, _two_rounds),
    ToolSpec("test_capabilities", "cinema", "Client capabilities", {"type": "object"}, _capabilities),
]


def _asks_first(arguments: dict[str, str], ctx) -> str:
    answer = ctx.interaction.input_responses().get("topic")
    if answer is None:
        raise InputRequired({"topic": elicitation_request("Topic?", NAME_FORM)})
    return f"Write about {answer['content']['name']}"


@pytest.fixture(autouse=True)
def round_trip_features():
    for spec in SPECS:
        register(spec)
    prompts.prompt(name="test_asks_first", group="cinema", title="Asks", description="Asks first", with_context=True)(
        _asks_first
    )
    yield
    for spec in SPECS:
        unregister(spec.name)
    prompts._prompts.pop("test_asks_first")


async def _elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": f"answer to {params.message}"})


async def _sample(context, params) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="hello"), model="m")


async def _roots(context) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])


def run(fn, **client_options: Any):
    async def connected():
        server = build_server(lambda _ctx: (dispatch.call_context(transport="test"), None))
        async with Client(server, mode="2026-07-28", cache=None, **client_options) as client:  # type: ignore[arg-type]
            return await fn(client)

    return anyio.run(connected)


ANSWERING = {"elicitation_callback": _elicit, "sampling_callback": _sample, "list_roots_callback": _roots}


def test_a_tool_asks_for_a_form_a_model_answer_and_roots_in_one_round():
    result = run(lambda client: client.call_tool("test_everything_at_once", {}), **ANSWERING)
    assert result.structured_content == {"name": "answer to Your name?", "model": "hello", "roots": ["file:///work"]}


def test_the_state_goes_out_sealed_and_comes_back_as_the_tool_minted_it():
    async def by_hand(client):
        first = await client.session.call_tool("test_two_rounds", {}, allow_input_required=True)
        answer = {"first": types.ElicitResult(action="accept", content={"name": "A"})}
        second = await client.session.call_tool(
            "test_two_rounds", {}, input_responses=answer, request_state=first.request_state, allow_input_required=True
        )
        answer = {"second": types.ElicitResult(action="accept", content={"name": "B"})}
        done = await client.session.call_tool(
            "test_two_rounds", {}, input_responses=answer, request_state=second.request_state
        )
        return first, second, done

    first, second, done = run(by_hand, **ANSWERING)
    assert isinstance(first, types.InputRequiredResult) and isinstance(second, types.InputRequiredResult)
    assert "after first" not in first.request_state and "after second" not in second.request_state
    assert done.structured_content == {"answers": ["A", "B"]}


def test_a_tool_sees_what_the_client_declared():
    declared = run(lambda client: client.call_tool("test_capabilities", {}), sampling_callback=_sample)
    assert declared.structured_content == {"elicitation": False, "sampling": True, "roots": False}


def test_a_prompt_declared_with_context_may_ask_first():
    result = run(lambda client: client.get_prompt("test_asks_first"), **ANSWERING)
    assert [m.content.text for m in result.messages] == ["Write about answer to Topic?"]
