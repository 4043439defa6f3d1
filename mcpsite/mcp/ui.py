"""MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): views a host renders in a sandboxed iframe (docs/mcp-apps.md).

An app declares a view in its `resources.py` with `view(...)`: a `ui://<group>/<name>` resource served as
`text/html;profile=mcp-app`, scoped to the app's tool group like every resource, and names it on a tool
(`@tool(ui=...)`). A view is one self-contained HTML document: its own markup, style and script, plus the shared
bridge (`ui_views/bridge.js`: the MCP Apps postMessage JSON-RPC, locale, DOM helpers) and stylesheet
(`ui_views/base.css`), inlined here when the document is first served. No build step, no external origin: the
declared CSP (`_meta.ui.csp`) allows none, and the document's own CSP admits only its inline scripts, by hash.

Clients that did not negotiate the extension (`client_supports_apps`) see none of it: tools/list and tools/call
answer them byte for byte as before (server.py), app-only tools do not exist for them (dispatch.py), the views
are not listed.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.conf import settings
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, client_supports_apps

from . import resources
from .registry import CallContext, ToolSpec

__all__ = ["APP_MIME_TYPE", "EXTENSION_ID", "apps_enabled", "document", "served_in", "tool_meta", "view"]

SHARED = Path(__file__).with_name("ui_views")
# Markers a view's HTML leaves for the shared parts.
BRIDGE_MARKER = "/* mcpsite:bridge */"
BASE_CSS_MARKER = "/* mcpsite:base-css */"
CSP_MARKER = "mcpsite:csp"
# Declared to the host (`_meta.ui.csp`): no origin for anything (fetches, scripts, styles, fonts, images, frames).
CSP: dict[str, list[str]] = {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}
# A view changes only with a deploy: hosts may keep it an hour (resources/read `ttlMs`, private to the key).
VIEW_TTL_MS = 3_600_000

_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def apps_enabled(sdk_ctx: Any) -> bool:
    """Whether this request's client negotiated MCP Apps (and the site serves them: MCP_APPS)."""
    return settings.MCP_APPS and client_supports_apps(sdk_ctx)


@functools.cache
def document(path: Path) -> str:
    """The view at `path` as served: the shared bridge and stylesheet inlined, and a Content-Security-Policy that
    admits no origin and only the document's own inline scripts (by SHA-256), so an injected script cannot run."""
    html = path.read_text(encoding="utf-8")
    for marker, shared in ((BRIDGE_MARKER, "bridge.js"), (BASE_CSS_MARKER, "base.css")):
        if marker not in html:
            raise ValueError(f"{path}: the view must include {marker}")
        html = html.replace(marker, (SHARED / shared).read_text(encoding="utf-8"))
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"
        for script in _SCRIPT.findall(html)
    )
    policy = (
        f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; img-src data:; "
        "connect-src 'none'; form-action 'none'; base-uri 'none'"
    )
    if CSP_MARKER not in html:
        raise ValueError(f"{path}: the view must include a CSP <meta> whose content is {CSP_MARKER}")
    return html.replace(CSP_MARKER, policy)


def view(*, uri: str, group: str, name: str, title: str, description: str, path: Path) -> None:
    """Register the view at `path` (an HTML file with the markers above) as the `ui://` resource `uri`."""
    if not uri.startswith("ui://"):
        raise ValueError(f"MCP Apps views use the ui:// scheme, got {uri!r}")

    @resources.resource(
        uri=uri,
        name=name,
        group=group,
        title=title,
        description=description,
        mime_type=APP_MIME_TYPE,
        meta={"ui": {"csp": CSP, "prefersBorder": True}},
        apps_only=True,
        cache_ttl_ms=VIEW_TTL_MS,
    )
    def read(ctx: CallContext) -> str:
        return document(path)


def is_view(spec: resources.ResourceSpec) -> bool:
    return spec.mime_type == APP_MIME_TYPE


def served_in(groups: Iterable[str]) -> bool:
    """Whether an endpoint serving `groups` (narrowed to the caller's scopes) serves any view."""
    return settings.MCP_APPS and any(is_view(spec) for spec in resources.resources(groups))


def tool_meta(spec: ToolSpec) -> dict[str, Any] | None:
    """A tool's `_meta` for a client with MCP Apps: its view, and `visibility: ["app"]` for a view-only tool."""
    if spec.ui is None:
        return None
    ui: dict[str, Any] = {"resourceUri": spec.ui}
    if spec.app_only:
        ui["visibility"] = ["app"]
    return {"ui": ui}
