"""A test-only MCP App (a tool naming a `ui://` view, and the view) for proving the test host (appshost.py) on its
own: installed in a live server by asgi_with_test_tools.py when MCPSITE_TEST_APPS_PROBE is set."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpsite.mcp.registry import CallContext, ToolSpec, register
from mcpsite.mcp.resources import resource

PROBE_URI = "ui://mcpsite-test/probe.html"
APP_MIME_TYPE = "text/html;profile=mcp-app"
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}, "unsafe": {"type": "boolean"}}}


@dataclass(frozen=True)
class _UiToolSpec(ToolSpec):
    """A tool whose tools/list entry names its view (`_meta.ui.resourceUri`)."""

    resource_uri: str = ""

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "_meta": {"ui": {"resourceUri": self.resource_uri}}}


def _probe(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    return {"echo": args.get("text", "")}


def install() -> None:
    _shim_tool_meta()
    register(_UiToolSpec("test_ui_probe", "cinema", "A view's data", SCHEMA, _probe, resource_uri=PROBE_URI))
    html = (Path(__file__).parent / "apps_host" / "probe.html").read_text()
    resource(uri=PROBE_URI, name="probe", group="cinema", description="The probe view", mime_type=APP_MIME_TYPE)(
        lambda ctx: html
    )


def _shim_tool_meta() -> None:  # TEMPORARY until the apps branch (ToolSpec.ui) is merged
    from mcpsite.mcp import server

    plain = server._tool

    def with_meta(spec, **kwargs):
        tool = plain(spec, **kwargs)
        if isinstance(spec, _UiToolSpec):
            return tool.model_copy(update={"meta": {"ui": {"resourceUri": spec.resource_uri}}})
        return tool

    server._tool = with_meta
