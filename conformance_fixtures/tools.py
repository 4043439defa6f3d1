"""The conformance suite's diagnostic tools (names, arguments and answers as its scenarios expect them)."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from mcpsite.core.errors import ApplicationError
from mcpsite.mcp import content, subscriptions
from mcpsite.mcp.content import Content
from mcpsite.mcp.interaction import InputRequired, elicitation_request, roots_request, sampling_request
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


@tool(name="test_simple_text", description="Tests simple text content response", input_schema=NO_ARGUMENTS)
def simple_text(args: dict[str, Any], ctx: CallContext) -> Content:
    return _text("This is a simple text response for testing.")


@tool(name="test_image_content", description="Tests image content response", input_schema=NO_ARGUMENTS)
def image_content(args: dict[str, Any], ctx: CallContext) -> Content:
    return Content((content.image(PNG, "image/png"),))


@tool(name="test_audio_content", description="Tests audio content response", input_schema=NO_ARGUMENTS)
def audio_content(args: dict[str, Any], ctx: CallContext) -> Content:
    return Content((content.audio(WAV, "audio/wav"),))


@tool(
    name="test_embedded_resource",
    description="Tests embedded resource content response",
    input_schema=NO_ARGUMENTS,
)
def embedded_resource(args: dict[str, Any], ctx: CallContext) -> Content:
    block = content.embedded_resource("test://embedded-resource", "text/plain", "This is an embedded resource content.")
    return Content((block,))


@tool(
    name="test_multiple_content_types",
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
    description="Diagnostic logging validator tool: logs at info (sent only where the request asks for logs)",
    input_schema=NO_ARGUMENTS,
)
def logging_tool(args: dict[str, Any], ctx: CallContext) -> Content:
    ctx.interaction.log("info", "Diagnostic trace logging activated")
    return _text("Logging evaluated")


@tool(
    name="test_error_handling",
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
    description="Tests tool that reports progress notifications",
    input_schema=NO_ARGUMENTS,
)
def tool_with_progress(args: dict[str, Any], ctx: CallContext) -> Content:
    _progress_steps(ctx)
    return _text("Progress reported")


@tool(
    name="test_streaming_elicitation",
    description="Diagnostic tool validating response streams: progress on the call's own stream, then the result",
    input_schema=NO_ARGUMENTS,
)
def streaming_elicitation(args: dict[str, Any], ctx: CallContext) -> Content:
    _progress_steps(ctx)
    return _text("Streaming complete")


@tool(
    name="test_missing_capability",
    description="Test tool requiring sampling: a client without the sampling capability is refused",
    input_schema=NO_ARGUMENTS,
    client_capabilities=("sampling",),
)
def missing_capability(args: dict[str, Any], ctx: CallContext) -> Content:
    return _text("Success")


@tool(
    name="test_sampling",
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
    description="Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
    input_schema=JSON_SCHEMA_2020_12,
)
def json_schema_2020_12(args: dict[str, Any], ctx: CallContext) -> Content:
    return _text(f"JSON Schema 2020-12 tool called with: {json.dumps(args)}")


@tool(
    name="test_trigger_tool_change",
    description="Announces a change of the tool list (notifications/tools/list_changed on listen streams)",
    input_schema=NO_ARGUMENTS,
)
def trigger_tool_change(args: dict[str, Any], ctx: CallContext) -> Content:
    subscriptions.publish_list_changed("tools")
    return _text("Mutation triggered")


@tool(
    name="test_trigger_prompt_change",
    description="Announces a change of the prompt list (notifications/prompts/list_changed on listen streams)",
    input_schema=NO_ARGUMENTS,
)
def trigger_prompt_change(args: dict[str, Any], ctx: CallContext) -> Content:
    subscriptions.publish_list_changed("prompts")
    return _text("Mutation triggered")


# --- multi round-trip (protocol 2026-07-28): the first call asks, the retry brings the answers -----------------


def form(**fields: str) -> dict[str, Any]:
    """A form of required fields of the given JSON types."""
    return {"type": "object", "properties": {k: {"type": v} for k, v in fields.items()}, "required": list(fields)}


def answered(ctx: CallContext, key: str, field: str) -> str | None:
    """The text the user entered in `field` of the form asked under `key`, or None (not answered, or not so)."""
    answer = ctx.interaction.input_responses().get(key)
    values = answer.get("content") if isinstance(answer, dict) and answer.get("action") == "accept" else None
    value = values.get(field) if isinstance(values, dict) else None
    return value if isinstance(value, str) else None


def sampled(ctx: CallContext, key: str) -> str | None:
    answer = ctx.interaction.input_responses().get(key)
    message = answer.get("content") if isinstance(answer, dict) else None
    text = message.get("text") if isinstance(message, dict) else None
    return text if isinstance(text, str) else None


def roots(ctx: CallContext, key: str) -> list[str] | None:
    answer = ctx.interaction.input_responses().get(key)
    listed = answer.get("roots") if isinstance(answer, dict) else None
    if not isinstance(listed, list):
        return None
    return [str(root.get("uri")) for root in listed if isinstance(root, dict)]


ASK_NAME = elicitation_request("What is your name?", form(name="string"))
ASK_OK = elicitation_request("Please confirm", form(ok="boolean"))


@tool(
    name="test_input_required_result_elicitation",
    description="Multi round-trip: asks the user's name, then greets them",
    input_schema=NO_ARGUMENTS,
)
def mrtr_elicitation(args: dict[str, Any], ctx: CallContext) -> Content:
    name = answered(ctx, "user_name", "name")
    if name is None:  # first round, or an answer that is not one (asked again)
        raise InputRequired({"user_name": ASK_NAME})
    return _text(f"Hello, {name}!")


@tool(
    name="test_input_required_result_sampling",
    description="Multi round-trip: asks the client's model a question, then returns its answer",
    input_schema=NO_ARGUMENTS,
)
def mrtr_sampling(args: dict[str, Any], ctx: CallContext) -> Content:
    answer = sampled(ctx, "capital_question")
    if answer is None:
        raise InputRequired({"capital_question": sampling_request("What is the capital of France?", 100)})
    return _text(f"The model answered: {answer}")


@tool(
    name="test_input_required_result_list_roots",
    description="Multi round-trip: asks the client's roots, then lists them",
    input_schema=NO_ARGUMENTS,
)
def mrtr_list_roots(args: dict[str, Any], ctx: CallContext) -> Content:
    listed = roots(ctx, "client_roots")
    if listed is None:
        raise InputRequired({"client_roots": roots_request()})
    return _text(f"Client roots: {', '.join(listed) or '(none)'}")


@tool(
    name="test_input_required_result_request_state",
    description="Multi round-trip with a request state: the retry must bring it back",
    input_schema=NO_ARGUMENTS,
)
def mrtr_request_state(args: dict[str, Any], ctx: CallContext) -> Content:
    answer = ctx.interaction.input_responses().get("confirm")
    if ctx.interaction.request_state() != "request-state-round-1" or not isinstance(answer, dict):
        raise InputRequired({"confirm": ASK_OK}, "request-state-round-1")
    return _text(f"state-ok: the request state came back, and the answer was {answer.get('action')}")


@tool(
    name="test_input_required_result_multiple_inputs",
    description="Multi round-trip: a form, a model's answer and the client's roots in one round",
    input_schema=NO_ARGUMENTS,
)
def mrtr_multiple_inputs(args: dict[str, Any], ctx: CallContext) -> Content:
    name, greeting, listed = answered(ctx, "user_name", "name"), sampled(ctx, "greeting"), roots(ctx, "client_roots")
    if ctx.interaction.request_state() != "multiple-inputs" or name is None or greeting is None or listed is None:
        requests = {
            "user_name": ASK_NAME,
            "greeting": sampling_request("Generate a greeting", 50),
            "client_roots": roots_request(),
        }
        raise InputRequired(requests, "multiple-inputs")
    return _text(f"{greeting}, {name}! Roots: {', '.join(listed) or '(none)'}")


@tool(
    name="test_input_required_result_multi_round",
    description="Multi round-trip over three rounds: a name, then a colour, then the answer",
    input_schema=NO_ARGUMENTS,
)
def mrtr_multi_round(args: dict[str, Any], ctx: CallContext) -> Content:
    state = ctx.interaction.request_state() or ""
    if state.startswith("step2:") and (color := answered(ctx, "step2", "color")) is not None:
        return _text(f"Hello {state.removeprefix('step2:')}, your favourite colour is {color}")
    if state == "step1" and (name := answered(ctx, "step1", "name")) is not None:
        ask_color = elicitation_request("Step 2: What is your favorite color?", form(color="string"))
        raise InputRequired({"step2": ask_color}, f"step2:{name}")
    ask_name = elicitation_request("Step 1: What is your name?", form(name="string"))
    raise InputRequired({"step1": ask_name}, "step1")


@tool(
    name="test_input_required_result_tampered_state",
    description="Multi round-trip whose sealed request state is refused once changed in transit",
    input_schema=NO_ARGUMENTS,
)
def mrtr_tampered_state(args: dict[str, Any], ctx: CallContext) -> Content:
    if ctx.interaction.request_state() != "sealed" or "confirm" not in ctx.interaction.input_responses():
        raise InputRequired({"confirm": ASK_OK}, "sealed")
    return _text("The request state came back intact")


@tool(
    name="test_input_required_result_capabilities",
    description="Multi round-trip asking only for what the client declared it can answer",
    input_schema=NO_ARGUMENTS,
)
def mrtr_capabilities(args: dict[str, Any], ctx: CallContext) -> Content:
    if responses := ctx.interaction.input_responses():
        return _text(f"capabilities-ok: received {','.join(sorted(responses))}")
    requests = {}
    if ctx.interaction.client_can("elicitation"):
        requests["elicit_input"] = elicitation_request("Elicitation input", form(value="string"))
    if ctx.interaction.client_can("sampling"):
        requests["sample_input"] = sampling_request("Sample request", 50)
    if not requests:
        return _text("No supported capabilities declared")
    raise InputRequired(requests, "capabilities")
