"""Every person: axe-core (pinned in scripts/node-tools) checks every admin page each role can open, in Japanese
and in English, light and dark, in Chromium, and finds no serious or critical violation."""

from __future__ import annotations

import pytest
from django.db import connection  # noqa: F401  # the skipif condition reads it

from mcpsite.tests.test_i18n import ROLES, make_staff, seed_demo_world, superuser_paths
from mcpsite.tests.tsclient import node_bin

pytestmark = pytest.mark.django_db(transaction=True)

RUN_AXE_JS = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => ({rule: v.id, impact: v.impact, where: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
}"""


def axe_script() -> str:
    return str(node_bin().parents[2] / "node_modules" / "axe-core" / "axe.min.js")


@pytest.mark.skipif("connection.vendor == 'postgresql'", reason="the pages' markup, not the database: once is enough")
def test_no_serious_accessibility_violation_on_any_admin_page(
    admin_login, live_server, django_user_model, monkeypatch, tmp_path
):
    script = axe_script()
    oauth_client = seed_demo_world(monkeypatch)
    superuser = admin_login()
    browser = superuser.context.browser
    base = live_server.url
    paths = list(dict.fromkeys(superuser_paths(superuser, base, oauth_client, tmp_path)))
    superuser.close()
    for username, perms in ROLES.items():
        if perms is not None:
            make_staff(django_user_model, username, perms)
    # Each role in both languages and in dark mode: Japanese on a light page, English on a dark one.
    passes = [(role, language, scheme) for role in ROLES for language, scheme in (("ja", "light"), ("en", "dark"))]
    found: dict[str, list] = {}
    checked = 0
    for username, language, scheme in passes:
        context = browser.new_context(locale="ja-JP" if language == "ja" else "en-US", color_scheme=scheme)
        context.add_init_script(path=script)  # in every document, before its own scripts (and its CSP)
        try:
            page = context.new_page()
            page.goto(f"{base}/admin/login/")
            page.fill("#id_username", username)
            page.fill("#id_password", "staff-password-123" if username == "staff" else f"{username}-password-123")
            page.click("input[type=submit]")
            page.wait_for_url(f"{base}/admin/")
            for path in paths:
                response = page.goto(base + path)
                if response is None or response.status != 200:
                    continue  # a page this role may not open (its 403 page is checked at /admin/… once)
                checked += 1
                for violation in page.evaluate(RUN_AXE_JS):
                    found.setdefault(violation["rule"], []).append((username, language, scheme, path, violation))
        finally:
            context.close()
    assert checked > 100, checked
    summary = "\n".join(
        f"{rule} ({len(hits)}): " + "; ".join(f"{u}/{lang}/{s} {p} {v['where'][:2]}" for u, lang, s, p, v in hits[:3])
        for rule, hits in found.items()
    )
    assert not found, summary
