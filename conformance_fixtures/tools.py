"""The conformance suite's diagnostic tools (names, arguments and answers as its scenarios expect them)."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from mcpsite.core.errors import ApplicationError
from mcpsite.mcp import content
from mcpsite.mcp.content import Content
from mcpsite.mcp.registry import CallContext, tool

GROUP = "conformance"
NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}
# A 1x1 red PNG and a minimal WAV file (the suite's own samples).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")


def _text(value: str) -> Content:
    return Content((content.text(value),))


@tool(name="test_simple_text", group=GROUP, description="Tests simple text content response", input_schema=NO_ARGUMENTS)
def simple_text(args: dict[str, Any], ctx: CallContext) -> Content:
    return _text("This is a simple text response for testing.")


@tool(name="test_image_content", group=GROUP, description="Tests image content response", input_schema=NO_ARGUMENTS)
def image_content(args: dict[str, Any], ctx: CallContext) -> Content:
    return Content((content.image(PNG, "image/png"),))


@tool(name="test_audio_content", group=GROUP, description="Tests audio content response", input_schema=NO_ARGUMENTS)
def audio_content(args: dict[str, Any], ctx: CallContext) -> Content:
    return Content((content.audio(WAV, "audio/wav"),))


@tool(
    name="test_embedded_resource",
    group=GROUP,
    description="Tests embedded resource content response",
    input_schema=NO_ARGUMENTS,
)
def embedded_resource(args: dict[str, Any], ctx: CallContext) -> Content:
    block = content.embedded_resource("test://embedded-resource", "text/plain", "This is an embedded resource content.")
    return Content((block,))


@tool(
    name="test_multiple_content_types",
    group=GROUP,
    description="Tests response with multiple content types (text, image, resource)",
    input_schema=NO_ARGUMENTS,
)
def multiple_content_types(args: dict[str, Any], ctx: CallContext) -> Content:
    document = json.dumps({"test": "data", "value": 123})
    return Content(
        (
            content.text("Multiple content types test:"),
            content.image(PNG, "image/png"),
            content.embedded_resource("test://mixed-content-resource", "application/json", document),
        )
    )


@tool(
    name="test_tool_with_logging",
    group=GROUP,
    description="Tests tool that emits log messages during execution",
    input_schema=NO_ARGUMENTS,
)
def tool_with_logging(args: dict[str, Any], ctx: CallContext) -> Content:
    for step, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if step:
            time.sleep(0.05)
        ctx.interaction.log("info", message)
    return _text("Tool with logging executed successfully")


@tool(
    name="test_logging_tool",
    group=GROUP,
    description="Diagnostic logging validator tool: logs at info (sent only where the request asks for logs)",
    input_schema=NO_ARGUMENTS,
)
def logging_tool(args: dict[str, Any], ctx: CallContext) -> Content:
    ctx.interaction.log("info", "Diagnostic trace logging activated")
    return _text("Logging evaluated")


@tool(
    name="test_error_handling",
    group=GROUP,
    description="Tests error response handling",
    input_schema=NO_ARGUMENTS,
)
def error_handling(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    raise ApplicationError("This tool intentionally returns an error for testing")


def _progress_steps(ctx: CallContext) -> None:
    for done in (0, 50, 100):
        if done:
            time.sleep(0.05)
        ctx.interaction.progress(done, 100, f"Completed step {done} of 100")


@tool(
    name="test_tool_with_progress",
    group=GROUP,
    description="Tests tool that reports progress notifications",
    input_schema=NO_ARGUMENTS,
)
def tool_with_progress(args: dict[str, Any], ctx: CallContext) -> Content:
    _progress_steps(ctx)
    return _text("Progress reported")


@tool(
    name="test_streaming_elicitation",
    group=GROUP,
    description="Diagnostic tool validating response streams: progress on the call's own stream, then the result",
    input_schema=NO_ARGUMENTS,
)
def streaming_elicitation(args: dict[str, Any], ctx: CallContext) -> Content:
    _progress_steps(ctx)
    return _text("Streaming complete")


@tool(
    name="test_missing_capability",
    group=GROUP,
    description="Test tool requiring sampling: a client without the sampling capability is refused",
    input_schema=NO_ARGUMENTS,
    client_capabilities=("sampling",),
)
def missing_capability(args: dict[str, Any], ctx: CallContext) -> Content:
    return _text("Success")


@tool(
    name="test_sampling",
    group=GROUP,
    description="Tests server-initiated sampling (LLM completion request)",
    input_schema={
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}},
        "required": ["prompt"],
    },
)
def sampling(args: dict[str, Any], ctx: CallContext) -> Content:
    try:
        answer = ctx.interaction.sample(args["prompt"], max_tokens=100)
    except Exception as exc:
        return _text(f"Sampling not supported or error: {exc}")
    return _text(f"LLM response: {answer or 'No response'}")


def _elicited(ctx: CallContext, message: str, schema: dict[str, Any], label: str) -> Content:
    if not ctx.interaction.can_confirm():
        return _text("Elicitation not supported on this request")
    answer = ctx.interaction.elicit(message, schema)
    return _text(f"{label}: action={answer.action}, content={json.dumps(answer.content or {})}")


@tool(
    name="test_elicitation",
    group=GROUP,
    description="Tests server-initiated elicitation (user input request)",
    input_schema={
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The message to show the user"}},
        "required": ["message"],
    },
)
def elicitation(args: dict[str, Any], ctx: CallContext) -> Content:
    schema = {
        "type": "object",
        "properties": {"response": {"type": "string", "description": "User's response"}},
        "required": ["response"],
    }
    return _elicited(ctx, args["message"], schema, "User response")


SEP1034_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}


@tool(
    name="test_elicitation_sep1034_defaults",
    group=GROUP,
    description="Tests elicitation with default values per SEP-1034",
    input_schema=NO_ARGUMENTS,
)
def elicitation_sep1034_defaults(args: dict[str, Any], ctx: CallContext) -> Content:
    message = "Please review and update the form fields with defaults"
    return _elicited(ctx, message, SEP1034_SCHEMA, "Elicitation completed")


def _choices(prefix: str, titles: tuple[str, ...], key: str = "oneOf") -> dict[str, Any]:
    return {key: [{"const": f"{prefix}{i}", "title": title} for i, title in enumerate(titles, 1)]}


SEP1330_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            **_choices("value", ("First Option", "Second Option", "Third Option")),
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": _choices("value", ("First Choice", "Second Choice", "Third Choice"), key="anyOf"),
        },
    },
    "required": [],
}


@tool(
    name="test_elicitation_sep1330_enums",
    group=GROUP,
    description="Tests elicitation with enum schema improvements per SEP-1330",
    input_schema=NO_ARGUMENTS,
)
def elicitation_sep1330_enums(args: dict[str, Any], ctx: CallContext) -> Content:
    message = "Please select options from the enum fields"
    return _elicited(ctx, message, SEP1330_SCHEMA, "Elicitation completed")


# JSON Schema 2020-12 keywords tools/list must pass through unchanged (SEP-1613, SEP-2106).
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@tool(
    name="json_schema_2020_12_tool",
    group=GROUP,
    description="Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
    input_schema=JSON_SCHEMA_2020_12,
)
def json_schema_2020_12(args: dict[str, Any], ctx: CallContext) -> Content:
    return _text(f"JSON Schema 2020-12 tool called with: {json.dumps(args)}")
