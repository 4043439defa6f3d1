"""An MCP Apps host in Chromium for the browser tests of the views: `apps_host/host.mjs` (the official TypeScript
client plus ext-apps' `AppBridge`, both pinned in scripts/node-tools), bundled here by the pinned esbuild.

`AppsHost(context, server_url, key)` serves, through Playwright routes (no server of its own):
- the host page on the live server's own origin (`HOST_PATH`), so the client reaches /mcp without CORS;
- the sandbox proxy (`apps_host/sandbox.html`) on `SANDBOX_ORIGIN`, with the Content-Security-Policy built from the
  view resource's `_meta.ui.csp` (`view_csp`): the view's srcdoc iframe inherits it;
- `ELSEWHERE`, another origin that only counts the requests reaching it (the CSP tests).

`host.open(tool, arguments)` calls the tool and renders its view; `host.view` locates inside the view's document.
Console messages, page errors and dialogs of every frame are kept (`console`, `errors`, `dialogs`), and the name of
every tool the client called on the server (`called`: the host's own call, then the view's through AppBridge).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from .tsclient import node_bin

SOURCE = Path(__file__).parent / "apps_host"
HOST_PATH = "/__apps_host__/"
SANDBOX_ORIGIN = "http://sandbox.mcpsite.test"
ELSEWHERE = "http://elsewhere.mcpsite.test"


def host_bundle() -> str:
    """host.mjs and its packages in one browser script."""
    return browser_bundle(SOURCE / "host.mjs")


@functools.cache
def browser_bundle(entry: Path) -> str:
    """A browser module and its packages in one script (esbuild, from scripts/node-tools' directory)."""
    bin_dir = node_bin()
    modules = bin_dir.parents[2] / "node_modules"
    out = Path(tempfile.mkdtemp(prefix="mcpsite-apps-host-"))
    try:
        done = subprocess.run(
            [str(modules / ".bin" / "esbuild"), str(entry), "--bundle", "--format=esm",
             "--platform=browser", "--target=chrome120", "--log-level=warning", f"--outfile={out / 'host.js'}"],
            env={**os.environ, "NODE_PATH": str(modules), "PATH": f"{bin_dir}:{os.environ['PATH']}"},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if done.returncode != 0:
            pytest.fail(f"esbuild could not bundle {entry.name}:\n{done.stderr}")
        return (out / "host.js").read_text()
    finally:
        shutil.rmtree(out, ignore_errors=True)


_DOMAIN = re.compile(r"^[^;\s'\",]+$")


def view_csp(declared: dict[str, Any]) -> str:
    """The sandbox's policy for a view declaring `declared` (`_meta.ui.csp`): inline script and style only, and
    the declared origins where the ext-apps spec puts them; nothing else from anywhere (not even its own origin)."""

    def domains(key: str) -> str:
        return " ".join(d for d in declared.get(key) or [] if isinstance(d, str) and _DOMAIN.match(d))

    resources, connect = domains("resourceDomains"), domains("connectDomains")
    directives = [
        "default-src 'none'",
        f"script-src 'unsafe-inline' {resources}",
        f"style-src 'unsafe-inline' {resources}",
        f"img-src data: blob: {resources}",
        f"font-src data: {resources}",
        f"media-src data: {resources}",
        f"connect-src {connect or "'none'"}",
        f"frame-src {domains('frameDomains') or "'none'"}",
        f"base-uri {domains('baseUriDomains') or "'none'"}",
        "object-src 'none'",
        "form-action 'none'",
    ]
    return "; ".join(directive.strip() for directive in directives)


class AppsHost:
    """The test host in one page of `context` (a fresh browser context), against the live server at `server_url`."""

    def __init__(self, context, server_url: str, key: str, locale: str = "ja-JP") -> None:
        self.server_url, self.locale = server_url, locale
        self.console: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.elsewhere: list[str] = []
        self.csp_served: list[str] = []
        self.called: list[str] = []
        config = {"mcpUrl": f"{server_url}/mcp", "key": key, "sandboxUrl": f"{SANDBOX_ORIGIN}/sandbox.html",
                  "locale": locale}  # fmt: skip
        self._index = (
            '<!doctype html><html><head><meta charset="utf-8"><title>MCP Apps test host</title>'
            "<style>body{margin:0;font-family:sans-serif}#view{border:0;width:100%;height:600px;display:block}</style>"
            f"<script>window.APPS_HOST_CONFIG = {json.dumps(config)};</script>"
            '<script type="module" src="host.js"></script></head><body><div id="host"></div></body></html>'
        )
        context.route(f"{server_url}{HOST_PATH}**", self._serve_host)
        context.route(f"{SANDBOX_ORIGIN}/**", self._serve_sandbox)
        context.route(f"{ELSEWHERE}/**", self._serve_elsewhere)
        self.page = page = context.new_page()
        page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("dialog", self._dialog)
        page.on("request", self._request)
        host_bundle()  # bundled before the page asks for it: on a loaded machine esbuild outlasts a navigation's wait
        page.goto(f"{server_url}{HOST_PATH}")
        page.wait_for_function("window.appsHost !== undefined")

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _request(self, request) -> None:
        if request.method == "POST" and request.url == f"{self.server_url}/mcp":
            message = request.post_data_json
            if isinstance(message, dict) and message.get("method") == "tools/call":
                self.called.append(message["params"]["name"])

    def _serve_host(self, route) -> None:
        path = urlsplit(route.request.url).path
        if path == HOST_PATH:
            route.fulfill(status=200, content_type="text/html; charset=utf-8", body=self._index)
        elif path == f"{HOST_PATH}host.js":
            route.fulfill(status=200, content_type="text/javascript; charset=utf-8", body=host_bundle())
        else:
            route.fulfill(status=404, body="")

    def _serve_sandbox(self, route) -> None:
        query = parse_qs(urlsplit(route.request.url).query)
        policy = view_csp(json.loads(query.get("csp", ["{}"])[0]))
        self.csp_served.append(policy)
        route.fulfill(
            status=200,
            headers={"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": policy},
            body=(SOURCE / "sandbox.html").read_text(),
        )

    def _serve_elsewhere(self, route) -> None:
        self.elsewhere.append(route.request.url)
        route.fulfill(status=200, headers={"Access-Control-Allow-Origin": "*"}, content_type="text/plain", body="x")

    def open(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call `tool`, render its view and hand it the call's input and result: {uri, result, csp, meta}."""
        return self.page.evaluate("([tool, args]) => window.appsHost.open(tool, args)", [tool, arguments or {}])

    @property
    def view(self):
        """A FrameLocator inside the view's document (the inner iframe of the sandbox proxy)."""
        return self.page.frame_locator("#view").frame_locator("iframe")

    def view_frame(self):
        """The view's Frame (for evaluating script in it)."""
        self.view.locator("body").wait_for(state="attached")
        return next(frame for frame in self.page.frames if frame.url == "about:srcdoc")

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.page.evaluate("window.appsHost.events") if e["event"] == kind]
