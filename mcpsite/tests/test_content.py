"""Answers that are not one JSON object (mcpsite/mcp/content.py): tools answering with content blocks, binary
resources, prompts rendering to blocks, tool log messages, tools that need a client capability; through the official
client in process against the real SDK server, on protocol 2025-11-25 (legacy: initialize) and 2026-07-28."""

from __future__ import annotations

import base64
from typing import Any

import anyio
import mcp_types as types
import pytest
from django.test import override_settings
from mcp import Client
from mcp.shared.exceptions import MCPError

from conformance_fixtures.checks import settings_problems
from mcpsite.mcp import content, dispatch, prompts, resources
from mcpsite.mcp.content import Content
from mcpsite.mcp.registry import ToolSpec, register, unregister
from mcpsite.mcp.server import build_server
from mcpsite.mcp.wire import INVALID_PARAMS, RESOURCE_NOT_FOUND

pytestmark = pytest.mark.django_db(transaction=True)

PNG = b"\x89PNG\r\n\x1a\n fake"
MODES = ["legacy", "2026-07-28"]


def _blocks(args, ctx) -> Content:
    return Content(
        (
            content.text("caption"),
            content.image(PNG, "image/png"),
            content.audio(b"RIFF", "audio/wav"),
            content.embedded_resource("mcpsite://doc", "application/json", '{"a": 1}'),
        )
    )


def _structured(args, ctx) -> Content:
    return Content((content.text("3 seats"),), structured={"seats": 3})


def _logs(args, ctx) -> dict:
    ctx.interaction.log("info", "step one")
    ctx.interaction.log("debug", {"step": 2})
    return {"logged": 2}


SPECS = [
    ToolSpec("test_blocks", "cinema", "Content blocks", {"type": "object"}, _blocks),
    ToolSpec("test_structured_blocks", "cinema", "Blocks and structure", {"type": "object"}, _structured),
    ToolSpec("test_logs", "cinema", "Logs", {"type": "object"}, _logs),
    ToolSpec(
        "test_needs_sampling", "cinema", "Needs sampling", {"type": "object"}, _structured,
        client_capabilities=("sampling",),
    ),
]  # fmt: skip


@pytest.fixture(autouse=True)
def content_features():
    for spec in SPECS:
        register(spec)
    logo = resources.resource(
        uri="mcpsite://test/logo.png", name="logo", group="cinema", description="A logo", mime_type="image/png"
    )
    logo(lambda ctx: PNG)
    prompts.prompt(name="test_image_prompt", group="cinema", title="Image", description="An image and a question")(
        lambda arguments: [content.image(PNG, "image/png"), content.text("What is this?")]
    )
    yield
    for spec in SPECS:
        unregister(spec.name)
    resources._resources.pop("mcpsite://test/logo.png")
    prompts._prompts.pop("test_image_prompt")


def run(fn, mode: str, **client_options: Any):
    async def connected():
        server = build_server(lambda _ctx: (dispatch.call_context(transport="test"), None), subscriptions=True)
        async with Client(server, mode=mode, cache=None, **client_options) as client:  # type: ignore[arg-type]
            return await fn(client)

    return anyio.run(connected)


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_answers_with_content_blocks(mode):
    result = run(lambda client: client.call_tool("test_blocks", {}), mode)
    encoded = base64.b64encode(PNG).decode()
    assert [block.model_dump(by_alias=True, exclude_none=True) for block in result.content] == [
        {"type": "text", "text": "caption"},
        {"type": "image", "data": encoded, "mimeType": "image/png"},
        {"type": "audio", "data": base64.b64encode(b"RIFF").decode(), "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "mcpsite://doc", "mimeType": "application/json", "text": '{"a": 1}'}},
    ]
    assert result.structured_content is None and not result.is_error


def test_content_blocks_with_a_structured_value_send_both():
    result = run(lambda client: client.call_tool("test_structured_blocks", {}), "2026-07-28")
    assert result.structured_content == {"seats": 3}
    assert [block.text for block in result.content] == ["3 seats"]


def test_transports_without_content_blocks_get_the_structured_value_or_the_blocks(tool_context):
    assert dispatch.call_tool(tool_context, "test_structured_blocks", {}).data == {"seats": 3}
    assert dispatch.call_tool(tool_context, "test_blocks", {}).data["content"][0] == {"type": "text", "text": "caption"}


@pytest.mark.parametrize("mode", MODES)
def test_a_binary_resource_is_read_as_a_blob(mode):
    result = run(lambda client: client.read_resource("mcpsite://test/logo.png"), mode)
    (contents,) = result.contents
    assert isinstance(contents, types.BlobResourceContents)
    assert base64.b64decode(contents.blob) == PNG and contents.mime_type == "image/png"


@pytest.mark.parametrize("mode", MODES)
def test_a_prompt_renders_to_one_user_message_per_block(mode):
    result = run(lambda client: client.get_prompt("test_image_prompt"), mode)
    assert [(m.role, m.content.type) for m in result.messages] == [("user", "image"), ("user", "text")]


@pytest.mark.parametrize(("mode", "code"), [("legacy", RESOURCE_NOT_FOUND), ("2026-07-28", INVALID_PARAMS)])
def test_an_unknown_resource_is_refused_with_the_revisions_code(mode, code):
    async def read(client):
        with pytest.raises(MCPError) as excinfo:
            await client.read_resource("mcpsite://cinema/nothing-here")
        return excinfo.value.error

    error = run(read, mode)
    assert (error.code, error.message, error.data) == (
        code,
        "Resource not found",
        {"uri": "mcpsite://cinema/nothing-here"},
    )


def test_a_tool_logs_to_a_client_that_listens():
    received = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append((params.level, params.data))

    result = run(lambda client: client.call_tool("test_logs", {}), "legacy", logging_callback=on_log)
    assert result.structured_content == {"logged": 2}
    assert received == [("info", "step one"), ("debug", {"step": 2})]


def test_on_2026_07_28_logs_go_only_to_a_request_that_asks_and_from_its_level_up():
    received: list = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append((params.level, params.data))

    run(lambda client: client.call_tool("test_logs", {}), "2026-07-28", logging_callback=on_log)
    unasked = list(received)
    run(lambda client: client.call_tool("test_logs", {}), "2026-07-28", logging_callback=on_log, log_level="info")
    assert unasked == [] and received == [("info", "step one")]


def _call_needing_sampling(client):
    async def call():
        try:
            return await client.call_tool("test_needs_sampling", {})
        except MCPError as exc:
            return exc.error

    return call()


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_needing_a_client_capability_refuses_a_client_without_it(mode):
    error = run(_call_needing_sampling, mode)
    assert error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data == {"requiredCapabilities": {"sampling": {}}}


def test_a_tool_needing_a_client_capability_runs_for_a_client_with_it():
    async def sample(context, params):
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="hi"), model="m")

    result = run(_call_needing_sampling, "2026-07-28", sampling_callback=sample)
    assert result.structured_content == {"seats": 3}


@pytest.mark.parametrize(("debug", "problems"), [(False, ["conformance_fixtures.E001"]), (True, [])])
def test_the_conformance_fixtures_refuse_a_deployment(debug, problems, monkeypatch):
    """conformance_fixtures (scripts/conformance's diagnostic tools), installed, fail the system checks (and so the
    server's start) with DEBUG off; a site without them is not concerned."""
    from django.apps import apps

    with override_settings(DEBUG=debug):
        assert settings_problems() == []  # not installed here
        monkeypatch.setattr(apps, "is_installed", lambda name: name == "conformance_fixtures")
        assert [problem.id for problem in settings_problems()] == problems
