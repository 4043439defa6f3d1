"""The conformance suite's diagnostic resources (test:// URIs)."""

from __future__ import annotations

import json

from mcpsite.mcp.registry import CallContext
from mcpsite.mcp.resources import resource, resource_template

from .tools import PNG


@resource(
    uri="test://static-text",
    name="static-text",
    title="Static Text Resource",
    description="A static text resource for testing",
    mime_type="text/plain",
)
def static_text(ctx: CallContext) -> str:
    return "This is the content of the static text resource."


@resource(
    uri="test://static-binary",
    name="static-binary",
    title="Static Binary Resource",
    description="A static binary resource (image) for testing",
    mime_type="image/png",
)
def static_binary(ctx: CallContext) -> bytes:
    return PNG


@resource(
    uri="test://watched-resource",
    name="watched-resource",
    title="Watched Resource",
    description="A resource clients may subscribe to",
    mime_type="text/plain",
    subscribable=True,
)
def watched(ctx: CallContext) -> str:
    return "Watched resource content"


@resource_template(
    uri_template="test://template/{id}/data",
    name="template",
    title="Resource Template",
    description="A resource template with parameter substitution",
    mime_type="application/json",
)
def template(variables: dict[str, str], ctx: CallContext) -> str:
    item = variables["id"]
    return json.dumps({"id": item, "templateTest": True, "data": f"Data for ID: {item}"})
