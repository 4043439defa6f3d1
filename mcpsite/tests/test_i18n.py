"""The admin speaks the staff's language: Japanese by default, English on request, nothing left in between.

The browser test crawls every admin page reachable from the index (app indexes, changelists, add forms, one
change form per model) plus the staff pages (seat map, ledger reports, geo resolve, stock adjustment, a new API
key) and fails on any label, heading, button, column header, help text, action, filter title, breadcrumb or
message that is ASCII-only and not a proper name. Data (table cells, object names, read-only values) is not
checked: seeded and typed names may be in any language.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from datetime import timedelta
from urllib.parse import urljoin, urlparse

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from mcpsite.core.scopes import tool_groups

# Words that stay as they are in Japanese text: proper names, protocols, formats, codes and the tool groups
# (API key scopes are named as in the API).
PROPER_NAMES = frozenset(
    {
        *tool_groups(),
        "API",
        "AP2",
        "CSV",
        "Claude",
        "Cursor",
        "Desktop",
        "Django",
        "E",  # E.164
        "GaluchatAPI",
        "HTTP",
        "ID",
        "IDs",
        "InnerVoice",
        "JSON",
        "MCP",
        "OK",
        "RFC",
        "RRULE",
        "SHA",
        "SKU",
        "SMS",
        "URL",
        "UTF",
        "WebSocket",
        "Webhook",
    }
)
# django-tasks-db 0.13.0 declares these admin labels as plain strings (never passed to gettext), so no
# catalogue can translate them; anything else English on its pages still fails.
UNTRANSLATABLE_THIRD_PARTY = frozenset({"id", "task name", "run after", "traceback"})

# What staff read as interface text (never table cells, object names or read-only values: those are data).
LABEL_SELECTORS = [
    ("heading", "h1, h2, h3, caption, legend"),
    ("label", "label"),
    ("column header", "th"),
    ("button", "button, input[type=submit], input[type=button], a.button, .object-tools a, .submit-row a"),
    ("help text", ".help, .helptext"),
    ("action", "select[name=action] option"),
    ("filter title", "#changelist-filter h3, #changelist-filter summary"),
    ("breadcrumb", ".breadcrumbs a"),
    ("message", ".messagelist li, .errornote, .errorlist li"),
    ("text", "#content-main p, .legend, .screen, nav.reports a, .paginator"),
]
# Data inside those: changelist rows, inline rows' object names, read-only values, the change form's object
# name (the h2 subtitle), links to one object, the user's name.
DATA_CONTAINERS = (
    "#result_list tbody, td.original, td > p, .readonly, .breadcrumbs a[href*='/change/'], "
    ".titles > h2, #user-tools, .cinema-seat-map table, .cinema-seat-grid table, table.geo-results tbody"
)

EXTRACT_JS = """([selectors, data]) => {
  const out = [];
  for (const [kind, sel] of selectors) {
    for (const el of document.querySelectorAll(sel)) {
      if (el.closest(data)) continue;
      const text = (el.tagName === "INPUT" ? el.value : el.innerText || el.textContent || "").trim();
      if (text) out.push([kind, text]);
    }
  }
  return out;
}"""


def untranslated(text: str) -> bool:
    """ASCII-only interface text with a word that is not a proper name, a code or a number."""
    if not text.isascii() or text.rstrip(":").lower() in UNTRANSLATABLE_THIRD_PARTY:
        return False
    words = re.findall(r"[A-Za-z][A-Za-z0-9_]*", text)
    proper = {name.lower() for name in PROPER_NAMES}  # the admin upper-cases some headings with CSS
    return any(w.lower() not in proper and not re.search(r"\d", w) and len(w) > 1 for w in words)


def english_left(page) -> list[tuple[str, str]]:
    return [
        (kind, text)
        for kind, text in page.evaluate(EXTRACT_JS, [LABEL_SELECTORS, DATA_CONTAINERS])
        if untranslated(text)
    ]


def admin_paths(page, base: str, selector: str, pattern: str) -> list[str]:
    hrefs = page.eval_on_selector_all(selector, "els => els.map(e => e.getAttribute('href'))")
    paths = {urlparse(urljoin(base, h)).path for h in hrefs if h}
    return sorted(p for p in paths if re.fullmatch(pattern, p))


def seed_demo_world(monkeypatch):
    """The demo data (`make demo`), plus a row for each model the demo leaves empty, so every change form exists."""
    from cinema.models import Reservation
    from geo.models import Granularity, PointLookup
    from mcpsite.models import ApiKey, ToolCall
    from merchant import services as merchant_services
    from merchant.models import Product
    from reminders.models import Contact, Message, Reminder, ReminderDelivery

    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", "demo-admin-password-123")
    call_command("seed_demo", stdout=io.StringIO(), stderr=io.StringIO())
    assert Reservation.objects.exists()
    now = timezone.now()
    ToolCall.objects.create(
        api_key=ApiKey.objects.first(), transport="http", tool="get_movie_list", outcome="ok", request_id="r1"
    )
    product = Product.objects.order_by("pk").first()
    merchant_services.inventory_adjust(product_id=product.pk, delta=5, reason="restock", note="入荷", actor=None)
    PointLookup.objects.create(
        name="東京駅",
        granularity=Granularity.ADMIN,
        points=[{"ref": "p1", "lat": 35.68, "lon": 139.76}],
        point_count=1,
        results=[{"code": "13101", "address": "東京都千代田区"}],
        resolved_at=now,
    )
    contact = Contact.objects.first()
    Message.objects.create(
        owner=contact.owner,
        contact=contact,
        platform="email",
        address=contact.email,
        text="明日の打ち合わせ",
        status="failed",
        failure_reason="SMTP 550",
    )
    reminder = Reminder.objects.first()
    ReminderDelivery.objects.create(
        reminder=reminder, occurrence_at=reminder.time, delivered_at=now, channel="email", status="sent"
    )
    # A remote client a user signed in, with its live token (the OAuth admin's two lists).
    from oauth2_provider.models import AccessToken, Application

    oauth_client = Application.objects.create(
        name="Claude",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1:33418/callback",
        registration_source=Application.RegistrationSource.DCR,
    )
    AccessToken.objects.create(
        user=contact.owner,
        application=oauth_client,
        token="i18n-token",
        scope="cinema reminders",
        resource=["http://127.0.0.1/mcp"],
        expires=now + timedelta(hours=1),
    )
    return oauth_client


@pytest.mark.django_db(transaction=True)
def test_every_admin_page_is_japanese_and_english_works(admin_login, live_server, monkeypatch, tmp_path):
    oauth_client = seed_demo_world(monkeypatch)
    page = admin_login()
    base = live_server.url
    problems: dict[str, list] = {}
    seen: set[str] = set()

    def visit(path: str, wanted=None) -> None:
        response = page.goto(base + path)
        assert response.status < 400, f"{path}: HTTP {response.status}"
        seen.add(path)
        if found := english_left(page):
            problems[path] = found

    visit("/admin/")
    page.screenshot(path=str(tmp_path / "admin-index-ja.png"), full_page=True)
    apps = admin_paths(page, base, "#content-main a, #nav-sidebar a", r"/admin/[a-z_]+/")
    changelists = admin_paths(page, base, "#content-main a", r"/admin/[a-z_]+/[a-z_]+/")
    adds = admin_paths(page, base, "#content-main a", r"/admin/[a-z_]+/[a-z_]+/add/")
    assert len(changelists) >= 20, changelists  # every project model and Django's users and groups
    for path in apps + adds:
        visit(path)
    for path in changelists:
        visit(path)
        rows = admin_paths(page, base, "#result_list tbody a", r"/admin/[a-z_]+/[a-z_]+/[^/]+/change/")
        if rows:
            visit(rows[0])
            if path == "/admin/cinema/schedule/":
                assert page.locator(".cinema-seat-map").count() == 1  # the seat map is on the change form
                page.screenshot(path=str(tmp_path / "seat-map-ja.png"), full_page=True)

    from merchant.models import Product

    product = Product.objects.order_by("pk").first()
    staff_pages = [
        reverse("admin:ledger_balance_sheet"),
        reverse("admin:ledger_income_statement"),
        reverse("admin:ledger_income_statement") + "?start=2030-01-01&end=2020-01-01",  # the error message
        reverse("admin:ledger_trial_balance"),
        reverse("admin:geo_pointlookup_resolve"),
        reverse("admin:merchant_product_adjust_stock", args=[product.pk]),
        "/admin/password_change/",
        "/oauth/connections/",  # the user's connected MCP clients
        # The remote sign-in's consent page (the sign-in page extends the admin's login page).
        "/oauth/authorize/?response_type=code&scope=cinema+ledger&state=s&code_challenge_method=S256"
        f"&client_id={oauth_client.client_id}&redirect_uri=http://127.0.0.1:33418/callback"
        "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    ]
    for path in staff_pages:
        visit(path)
        page.screenshot(path=str(tmp_path / f"{path.strip('/').replace('/', '-')[:60]}-ja.png"), full_page=True)

    assert page.locator("#consent-form input[name=groups]").count() == 2  # the consent page was the last one

    # Forms with their errors and the pages they lead to: a refused resolve, a stock change, a new API key.
    visit(reverse("admin:geo_pointlookup_resolve"))
    page.fill("#id_coordinates", "north,139")
    page.click("#resolve-form input[type=submit]")
    problems.update({"resolve (error)": found} if (found := english_left(page)) else {})
    assert page.locator(".errornote").count() == 1

    visit(reverse("admin:merchant_product_adjust_stock", args=[product.pk]))
    page.select_option("#id_reason", "restock")
    page.fill("#id_quantity", "2")
    page.click("#content-main input[type=submit]")
    page.wait_for_selector(".messagelist")
    problems.update({"adjust stock (done)": found} if (found := english_left(page)) else {})

    visit("/admin/mcpsite/apikey/add/")
    page.fill("#id_name", "i18n")
    page.select_option("#id_owner", label="staff")
    page.check("input[name=scopes][value=cinema]")
    page.click("input[name=_save]")
    page.wait_for_selector("#new-api-key")
    problems.update({"API key created": found} if (found := english_left(page)) else {})

    assert {"/admin/cinema/schedule/", "/admin/ledger/journalentry/", "/admin/reminders/reminder/"} <= seen
    assert not problems, "English left in the Japanese admin:\n" + "\n".join(
        f"{path}: {kind}: {text!r}" for path, found in problems.items() for kind, text in found
    )

    # The same admin for a browser that asks for English.
    english = page.context.browser.new_page(locale="en-US")
    english.context.add_cookies(page.context.cookies())
    english.goto(f"{base}/admin/")
    english.screenshot(path=str(tmp_path / "admin-index-en.png"), full_page=True)
    index = english.text_content("#content-main")  # (innerText would carry the CSS upper-casing)
    for text in ["Cinema", "Movies", "Schedules", "Accounting books", "Journal entries", "API keys", "Tool calls"]:
        assert text in index
    assert english.inner_text("h1") == "Site administration"
    english.goto(f"{base}/admin/cinema/schedule/")
    assert "Start time" in english.text_content("#result_list thead")
    print(f"screenshots: {tmp_path}")


# --- without a browser: the language negotiation and the catalogue -----------------------------------------


@pytest.mark.django_db
def test_admin_follows_accept_language_and_defaults_to_japanese(admin_client):
    japanese = admin_client.get("/admin/").content.decode()
    assert "映画館" in japanese and "上映スケジュール" in japanese and "Schedules" not in japanese
    english = admin_client.get("/admin/", headers={"Accept-Language": "en"}).content.decode()
    assert "Cinema" in english and "Schedules" in english and "上映スケジュール" not in english
    report = admin_client.get(reverse("admin:ledger_trial_balance"), headers={"Accept-Language": "en"})
    assert "Debits equal credits" in report.content.decode()


@pytest.mark.django_db
def test_language_code_en_makes_english_the_default(admin_client, settings):
    settings.LANGUAGE_CODE = "en"
    page = admin_client.get("/admin/merchant/product/").content.decode()
    assert "Products" in page and "Out of stock" in page and "商品" not in page
    # The browser's language still wins.
    assert (
        "在庫切れ" in admin_client.get("/admin/merchant/product/", headers={"Accept-Language": "ja"}).content.decode()
    )


def test_the_japanese_catalogue_is_complete():
    """Every entry is translated and none is fuzzy (msgfmt counts them); the format checks pass."""
    msgfmt = shutil.which("msgfmt")
    if msgfmt is None:
        pytest.fail("GNU gettext is not installed (make test installs it: apt-get install gettext)")
    po = settings.BASE_DIR / "locale" / "ja" / "LC_MESSAGES" / "django.po"
    result = subprocess.run(
        [msgfmt, "--check", "--statistics", "-o", "/dev/null", str(po)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"\d+ translated messages\.\n", result.stderr), result.stderr


def test_the_catalogue_keeps_djangos_own_japanese():
    """Our catalogue comes first, so a msgid Django already translates ("Change") must keep Django's meaning;
    a different sense takes a context (`{% translate "Change" context "stock movement" %}`)."""
    import gettext
    from pathlib import Path

    import django

    mo = settings.BASE_DIR / "locale" / "ja" / "LC_MESSAGES" / "django.mo"
    with mo.open("rb") as f:
        ours = gettext.GNUTranslations(f)._catalog
    clashes = {}
    for theirs_path in Path(django.__file__).parent.glob("**/locale/ja/LC_MESSAGES/django.mo"):
        with theirs_path.open("rb") as f:
            theirs = gettext.GNUTranslations(f)._catalog
        clashes |= {key: (text, theirs[key]) for key, text in ours.items() if key and theirs.get(key, text) != text}
    assert not clashes, clashes
