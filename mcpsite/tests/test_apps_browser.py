"""MCP Apps views in Chromium through a real host: the test host of appshost.py (ext-apps' AppBridge and the official
TypeScript client, bundled by esbuild) against one live server per module, each view in the sandbox proxy's
srcdoc iframe under the CSP its resource declares.

The first tests prove the host itself on a test-only view (apps_probe.py): the view initializes with the host's
locale, receives the call's input and result, calls a tool through the host; hostile text written as HTML is caught
(the control of the views' hostile-name tests); and the view's document cannot reach another origin.
"""

from __future__ import annotations

import pytest

from .appshost import ELSEWHERE, AppsHost
from .live import live_site

pytestmark = [pytest.mark.slow]

HOSTILE = '<img src=x onerror=console.error("XSS-img")><script>console.error("XSS-script")</script>'


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    with live_site(live_template, tmp_path_factory.mktemp("apps-browser")) as site:
        site.start_server(MCPSITE_TEST_APPS_PROBE="1", MCP_AUDIT_FLUSH_SECONDS="0")
        yield site


@pytest.fixture
def host_for(site, apps_browser):
    """host_for(locale="ja-JP") -> an AppsHost in a fresh browser context asking for `locale`."""
    contexts = []

    def make(locale: str = "ja-JP") -> AppsHost:
        context = apps_browser.get().new_context(locale=locale, viewport={"width": 900, "height": 900})
        contexts.append(context)
        return AppsHost(context, site.urls[0], site.key, locale=locale)

    yield make
    for context in contexts:
        context.close()


def injected(host: AppsHost) -> list[str]:
    """Elements of the view made from hostile text, and any script it ran."""
    found = host.view_frame().evaluate(
        "[...document.querySelectorAll('img, script:not(:first-of-type), [onerror]')].map((e) => e.outerHTML)"
    )
    ran = [line for line in host.console if "XSS" in line]
    return found + ran + host.dialogs


def test_the_host_renders_a_view_and_proxies_its_tool_calls(host_for):
    host = host_for("en-US")
    opened = host.open("test_ui_probe", {"text": "映画"})
    assert opened["uri"] == "ui://mcpsite-test/probe.html"
    assert opened["result"]["structuredContent"] == {"echo": "映画"}
    view = host.view
    assert view.locator("#locale").inner_text() == "en-US"
    assert view.locator("#result").inner_text() == "映画"
    view.locator("#call").click()
    assert view.locator("#called").inner_text(timeout=10_000) == "viewview"  # tools/call through AppBridge
    assert host.events("initialized")[0]["app"] == {"name": "probe", "version": "1.0.0"}
    assert host.errors == []


@pytest.mark.parametrize("unsafe", [False, True], ids=["text", "control-innerHTML"])
def test_hostile_text_is_caught_when_a_view_writes_it_as_html(host_for, unsafe):
    host = host_for()
    host.open("test_ui_probe", {"text": HOSTILE, "unsafe": unsafe})
    result = host.view.locator("#result")
    if unsafe:
        host.page.wait_for_timeout(500)  # the injected image's error handler runs
        assert injected(host)
    else:
        assert result.inner_text() == HOSTILE
        assert injected(host) == []


def test_the_view_cannot_reach_another_origin(host_for):
    """The sandbox's CSP (no domains declared): fetch, image, script, style and frame requests from the view to
    another origin are blocked before they are made; the same fetch from the host page (the control) arrives."""
    host = host_for()
    host.open("test_ui_probe", {"text": "csp"})
    assert "connect-src 'none'" in host.csp_served[-1]
    violations = host.view_frame().evaluate(
        """async (elsewhere) => {
            const seen = [];
            document.addEventListener('securitypolicyviolation', (e) => seen.push(e.effectiveDirective));
            const fetched = await fetch(`${elsewhere}/fetch`).then(() => 'loaded', () => 'blocked');
            for (const [tag, attribute, path] of [['img', 'src', 'img'], ['script', 'src', 'script'],
                                                  ['link', 'href', 'style'], ['iframe', 'src', 'frame']]) {
                const element = document.createElement(tag);
                if (tag === 'link') element.rel = 'stylesheet';
                element.setAttribute(attribute, `${elsewhere}/${path}`);
                document.body.appendChild(element);
            }
            await new Promise((resolve) => setTimeout(resolve, 500));
            return { fetched, seen: [...new Set(seen)].sort() };
        }""",
        ELSEWHERE,
    )
    assert violations["fetched"] == "blocked"
    assert violations["seen"] == ["connect-src", "frame-src", "img-src", "script-src-elem", "style-src-elem"]
    assert host.elsewhere == []
    assert host.page.evaluate("(url) => fetch(url).then((r) => r.text())", f"{ELSEWHERE}/control") == "x"
    assert host.elsewhere == [f"{ELSEWHERE}/control"]
