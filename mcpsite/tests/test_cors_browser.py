"""A web page on another loopback origin connects with the official TypeScript client, lists the tools and calls
one, in Chromium, against a live server whose CORS_ALLOWED_ORIGINS names the page (mcpsite/cors.py).

The page is served from loopback (a server of its own, so Chromium's local-network rules see a loopback page) at
`http://localhost:<port>`, an origin foreign to the server in every way: the server's ALLOWED_HOSTS names only
127.0.0.1, so the MCP transport's same-host origin rule does not admit it either. The control is the same page at
`http://127.0.0.1:<port>`, an origin the list does not name: the browser blocks it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .appshost import browser_bundle
from .live import LoopbackUpstream, live_site, loopback_upstream

pytestmark = [pytest.mark.slow]

PAGE_SOURCE = Path(__file__).parent / "cors_page" / "page.mjs"
INDEX = (
    b'<!doctype html><meta charset="utf-8"><title>CORS test page</title><script type="module" src="page.js"></script>'
)


class PageServer(LoopbackUpstream):
    """The web page: its HTML and the bundled client."""

    def do_GET(self):
        if self.path == "/page.js":
            self.send_response(200)
            payload = browser_bundle(PAGE_SOURCE).encode()
            self.send_header("Content-Type", "text/javascript; charset=utf-8")
        else:
            self.send_response(200)
            payload = INDEX
            self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def origins():
    """(the page's origin the server allows, the same page reached as another origin it does not name)."""
    with loopback_upstream(PageServer) as url:
        port = url.rsplit(":", 1)[1]
        yield f"http://localhost:{port}", f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory, origins):
    with live_site(live_template, tmp_path_factory.mktemp("cors-browser")) as site:
        site.start_server(CORS_ALLOWED_ORIGINS=origins[0], DJANGO_ALLOWED_HOSTS="127.0.0.1")
        yield site


@pytest.fixture
def page_on(apps_browser):
    """page_on(origin) -> a Chromium page at `origin`, holding window.mcpFromPage (cors_page/page.mjs)."""
    contexts = []

    def open_page(origin: str):
        context = apps_browser.get().new_context()
        contexts.append(context)
        page = context.new_page()
        page.console = []  # the browser's own account of a blocked request
        page.on("console", lambda message: page.console.append(message.text))
        page.goto(f"{origin}/")
        page.wait_for_function("window.mcpFromPage !== undefined")
        return page

    yield open_page
    for context in contexts:
        context.close()


def _connect(page, url: str, key: str) -> dict:
    return page.evaluate(
        "([url, key]) => window.mcpFromPage(url, key, 'test_echo', {text: 'ブラウザから'})", [url, key]
    )


@pytest.mark.parametrize("path", ["/mcp", "/mcp/cinema"])
def test_a_page_on_an_allowed_origin_lists_the_tools_and_calls_one(site, origins, page_on, path):
    page = page_on(origins[0])
    answer = _connect(page, f"{site.urls[0]}{path}", site.key)
    assert answer["ok"], (answer, page.console)
    assert {"test_echo", "get_movie_list"} <= set(answer["tools"])
    assert answer["result"]["structuredContent"]["echo"] == "ブラウザから"


def test_control_a_page_on_an_origin_the_list_does_not_name_is_blocked_by_the_browser(site, origins, page_on):
    """The same page and server; only the page's origin differs (one the MCP transport's same-host rule would
    accept, so the browser's CORS check is what blocks it)."""
    answer = _connect(page_on(origins[1]), f"{site.urls[0]}/mcp", site.key)
    assert not answer["ok"] and "fetch" in answer["error"].lower(), answer


def test_a_page_reads_the_challenge_of_a_request_without_a_credential(site, origins, page_on):
    """The 401 a browser's OAuth flow starts from: readable by the page, with its WWW-Authenticate."""
    page = page_on(origins[0])
    challenge = page.evaluate(
        """async (url) => {
            const answer = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'},
                                             body: JSON.stringify({jsonrpc: '2.0', id: 1, method: 'ping'})});
            return [answer.status, answer.headers.get('WWW-Authenticate')];
        }""",
        f"{site.urls[0]}/mcp",
    )
    assert challenge[0] == 401 and challenge[1].startswith("Bearer ")
    assert "resource_metadata=" in challenge[1]
