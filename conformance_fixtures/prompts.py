"""The conformance suite's diagnostic prompts."""

from __future__ import annotations

from mcpsite.mcp import content
from mcpsite.mcp.content import Block
from mcpsite.mcp.interaction import InputRequired, elicitation_request
from mcpsite.mcp.prompts import PromptArgument, prompt
from mcpsite.mcp.registry import CallContext

from .tools import PNG, answered, form


@prompt(
    name="test_simple_prompt",
    title="Simple Test Prompt",
    description="A simple prompt without arguments",
)
def simple(arguments: dict[str, str]) -> str:
    return "This is a simple prompt for testing."


@prompt(
    name="test_prompt_with_arguments",
    title="Prompt With Arguments",
    description="A prompt with required arguments",
    arguments=[PromptArgument("arg1", "First test argument"), PromptArgument("arg2", "Second test argument")],
)
def with_arguments(arguments: dict[str, str]) -> str:
    return f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'"


@prompt(
    name="test_prompt_with_embedded_resource",
    title="Prompt With Embedded Resource",
    description="A prompt that includes an embedded resource",
    arguments=[PromptArgument("resourceUri", "URI of the resource to embed")],
)
def with_embedded_resource(arguments: dict[str, str]) -> list[Block]:
    return [
        content.embedded_resource(arguments["resourceUri"], "text/plain", "Embedded resource content for testing."),
        content.text("Please process the embedded resource above."),
    ]


@prompt(
    name="test_prompt_with_image",
    title="Prompt With Image",
    description="A prompt that includes image content",
)
def with_image(arguments: dict[str, str]) -> list[Block]:
    return [content.image(PNG, "image/png"), content.text("Please analyze the image above.")]


@prompt(
    name="test_input_required_result_prompt",
    title="Prompt That Asks First",
    description="Multi round-trip: asks the user for context, then renders with it",
    with_context=True,
)
def asks_first(arguments: dict[str, str], ctx: CallContext) -> str:
    context = answered(ctx, "user_context", "context")
    if context is None:
        ask = elicitation_request("What context should the prompt use?", form(context="string"))
        raise InputRequired({"user_context": ask})
    return f"Prompt with context: {context}"
