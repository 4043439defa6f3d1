"""A test-only MCP App (a tool naming a `ui://` view, and the view) for proving the test host (appshost.py) on its
own: installed in a live server by asgi_with_test_tools.py when MCPSITE_TEST_APPS_PROBE is set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcpsite.mcp import ui
from mcpsite.mcp.registry import CallContext, ToolSpec, register
from mcpsite.mcp.resources import resource

PROBE_URI = "ui://mcpsite-test/probe.html"
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}, "unsafe": {"type": "boolean"}}}


def _probe(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    return {"echo": args.get("text", "")}


def install() -> None:
    """The tool and its view (hand-written: none of ui.view's shared bridge, so the host is tested on its own)."""
    register(ToolSpec("test_ui_probe", "cinema", "A view's data", SCHEMA, _probe, ui=PROBE_URI))
    html = (Path(__file__).parent / "apps_host" / "probe.html").read_text()
    resource(
        uri=PROBE_URI,
        name="probe",
        group="cinema",
        description="The probe view",
        mime_type=ui.APP_MIME_TYPE,
        meta={"ui": {"csp": ui.CSP}},
        apps_only=True,
    )(lambda ctx: html)
