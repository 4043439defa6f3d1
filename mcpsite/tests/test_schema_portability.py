"""Every tool's input and output schemas keep to the forms strict structured-output dialects accept, and every tool
has a title in the site's language and an icon (issue #37: the Inspector warned on `type: ["string", "null"]` in
resolve_points, search_products and build_cart_mandates; no tool had a title or an icon). The rules: docs/add-a-tool.md,
"Schemas every host accepts"."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from django.utils import translation

from mcpsite.mcp import registry

# Keywords strict dialects refuse (or the Inspector warns on); alternatives are said in a description instead.
REFUSED = {"oneOf", "allOf", "not", "if", "then", "else", "patternProperties", "dependentSchemas",
           "dependentRequired", "prefixItems", "unevaluatedProperties", "$ref", "$defs", "const"}  # fmt: skip
TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}


def product_tools() -> list[registry.ToolSpec]:
    """The apps' tools (not the test-only ones some tests register)."""
    return [t for t in registry.tools() if not t.func.__module__.startswith(("mcpsite.tests", "conformance_fixtures"))]


def non_portable(schema: Any, where: str = "") -> list[str]:
    """Where `schema` uses a form a strict dialect refuses."""
    if not isinstance(schema, dict):
        return [f"{where}: not a schema object"]
    found = [f"{where}/{keyword}" for keyword in sorted(REFUSED & set(schema))]
    kind = schema.get("type")
    if "type" in schema and not (isinstance(kind, str) and kind in TYPES):
        found.append(f"{where}/type: {kind!r} (one type name; nullable() for a value that may be null)")
    if "anyOf" in schema:
        found += [f"{where}/anyOf/{i}: no type" for i, branch in enumerate(schema["anyOf"]) if "type" not in branch]
        for i, branch in enumerate(schema["anyOf"]):
            found += non_portable(branch, f"{where}/anyOf/{i}")
    elif "type" not in schema and "enum" not in schema:
        found.append(f"{where}: no type")
    for name, sub in (schema.get("properties") or {}).items():
        found += non_portable(sub, f"{where}/properties/{name}")
    if isinstance(schema.get("items"), dict):
        found += non_portable(schema["items"], f"{where}/items")
    if isinstance(schema.get("additionalProperties"), dict):
        found += non_portable(schema["additionalProperties"], f"{where}/additionalProperties")
    return found


def test_the_walk_finds_the_forms_it_refuses():
    assert non_portable({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}) == [
        "/properties/a/type: ['string', 'null'] (one type name; nullable() for a value that may be null)"
    ]
    assert non_portable({"type": "object", "oneOf": [{"required": ["a"]}]}) == ["/oneOf"]
    assert non_portable({"type": "object", "properties": {"t": {"const": "x"}}}) == [
        "/properties/t/const",
        "/properties/t: no type",
    ]
    assert non_portable({"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}}) == []


@pytest.mark.parametrize("spec", product_tools(), ids=lambda spec: spec.name)
def test_every_tools_schemas_are_portable(spec):
    assert spec.input_schema.get("type") == "object"
    assert non_portable(spec.input_schema, "inputSchema") == []
    if spec.output_schema is not None:
        assert spec.output_schema.get("type") == "object"
        assert non_portable(spec.output_schema, "outputSchema") == []


@pytest.mark.parametrize("spec", product_tools(), ids=lambda spec: spec.name)
def test_every_tool_has_a_title_in_the_sites_language_and_an_icon(spec, settings):
    assert settings.LANGUAGE_CODE == "ja"
    listed = spec.describe()
    with translation.override("en"):
        english = spec.describe()["title"]
    assert listed["title"] and listed["title"] != english and not listed["title"].isascii()  # translated
    (icon,) = listed["icons"]
    assert icon["mimeType"] == "image/svg+xml" and icon["src"].startswith("data:image/svg+xml;base64,")
    svg = base64.b64decode(icon["src"].split(",", 1)[1]).decode()
    assert svg.startswith("<svg") and "<script" not in svg


@pytest.mark.django_db
def test_tools_list_shows_the_titles_and_icons(http_post):
    """The seed REST listing (ToolSpec.describe, as every transport's tools/list) and the MCP Tool model accept them."""
    from mcp_types import Tool

    listed = http_post("/mcp/tools/list", {}).json()["tools"]
    product = {spec.name for spec in product_tools()}
    shown = [tool for tool in listed if tool["name"] in product]
    assert shown and all(tool["title"] and tool["icons"] for tool in shown)
    assert all(Tool.model_validate(tool).icons for tool in shown)
