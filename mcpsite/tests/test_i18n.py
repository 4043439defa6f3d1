"""The admin speaks one language per page: Japanese under `ja`, English under `en`, nothing in between.

The browser test signs in as four staff members (a superuser, cinema staff, ledger staff who may only view, and
staff with no permission), walks every admin URL the superuser can reach (the index, app indexes, changelists, add
forms, one change form per model, the staff pages, the forms' error and result pages) for each of them in both
languages, and fails on any string a staff member can see or hear in the other language: text (hidden widgets such
as the calendar included), `title`, `aria-label`, `placeholder`, `alt`, button values and the page title. Pages a
role may not open must be the translated 403 page inside the admin's chrome.

Data is told apart from interface text by the database: a word (Latin) or run of Japanese that occurs in a stored
free-text value (names, descriptions, notes, JSON) is data. Values of fields with choices are not data: the
interface shows their labels, so a raw "failed" or "PENDING" is English left in the page.
"""

from __future__ import annotations

import ast
import io
import json
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
        "XLSX",
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
        # names of products, keys, headers, methods and units that Japanese text writes as they are
        "Accept",
        "Bearer",
        "Command",
        "Control",
        "django-axes",
        "IP",
        "LDAP",
        "Mac",
        "mcpsite",  # this site's name (the remote sign-in pages' header)
        "ms",
        "OAuth",
        "POST",
        "Streamable",
        "Toolkit",
        "URI",
        # GaluchatAPI's granularities and endpoints (the values an MCP client passes), and a CSV's columns
        "admin",
        "estat",
        "jarl",
        "JCC",
        "JCG",
        "raacs",
        "resareas",
        "rjccs",
        "lat",
        "lon",
    }
)
# django-tasks-db 0.13.0 declares these admin labels as plain strings (never passed to gettext), so no
# catalogue can translate them; anything else English on its pages still fails.
UNTRANSLATABLE_THIRD_PARTY: frozenset[str] = frozenset()
# Object names (str()) of third-party models, written in English by their packages: django-tasks-db's task
# results have no __str__ and django-axes' access logs read "Access Log for <user> @ <time>".
THIRD_PARTY_OBJECT_NAMES = re.compile(r"DBTaskResult object \([0-9a-f-]+\)|Access Log for \S+ @ [0-9 :.+-]+")

# Every string a staff member can see or hear, with where it is: text nodes (hidden ones too: the calendar, the
# inlines' empty rows), the accessible and hover names, placeholders, button values and the page title. Form
# fields' values and textareas are what was typed (data).
EXTRACT_JS = """() => {
  const out = [];
  const skip = "script, style, noscript, textarea, code, pre, select[multiple]:not([name=action]) option";
  const where = (el) => el.id ? `#${el.id}` : (el.className && typeof el.className === "string"
      ? `${el.tagName.toLowerCase()}.${el.className.split(" ")[0]}` : el.tagName.toLowerCase());
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(skip)) continue;
    const text = n.nodeValue.trim();
    if (text) out.push(["text in " + where(el), text]);
  }
  const named = "[title], [aria-label], [placeholder], [alt], input[type=submit], input[type=button]";
  for (const el of document.querySelectorAll(named)) {
    if (el.closest("script, style, noscript, select[multiple]:not([name=action]) option")) continue;
    for (const attr of ["title", "aria-label", "placeholder", "alt"]) {
      const value = (el.getAttribute(attr) || "").trim();
      if (value) out.push([attr + " of " + where(el), value]);
    }
    if (el.tagName === "INPUT" && (el.type === "submit" || el.type === "button") && el.value.trim())
      out.push(["button " + where(el), el.value.trim()]);
  }
  if (document.title.trim()) out.push(["page title", document.title.trim()]);
  return out;
}"""

URL = re.compile(r"https?://\S+")
# What someone typed, quoted back in a message ('north'), and masked secrets (a hash's first characters).
QUOTED_OR_MASKED = re.compile(r"'[^']*'|\S+\*{4,}")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'’.-]*")
JAPANESE = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff01-\uffef]+")


# Tables whose text is Django's own interface in English (permission names, model names, the history's field
# names), not data anyone typed: their words must not excuse English in a page.
NOT_DATA = frozenset({"auth.Permission", "contenttypes.ContentType", "admin.LogEntry", "sessions.Session"})


class Vocabulary:
    """What the database stores as free text: anything a page shows from there is data, not interface."""

    def __init__(self) -> None:
        from django.apps import apps
        from django.db import models

        values: list[str] = []
        for model in apps.get_models():
            if model._meta.label in NOT_DATA:
                continue
            fields = [
                f.attname
                for f in model._meta.concrete_fields
                if isinstance(f, models.CharField | models.TextField | models.JSONField | models.EmailField)
                and not f.choices
            ]
            if fields:
                for row in model._default_manager.values_list(*fields):
                    values.extend(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in row if v)
        self.words = {w.lower() for value in values for w in LATIN_WORD.findall(value)}
        self.text = "\n".join(values)

    def english_in_japanese(self, text: str) -> list[str]:
        """Latin words that are neither proper names, codes, numbers nor data."""
        if text.rstrip(":").lower() in UNTRANSLATABLE_THIRD_PARTY:
            return []
        text = THIRD_PARTY_OBJECT_NAMES.sub(" ", URL.sub(" ", QUOTED_OR_MASKED.sub(" ", text)))
        found = []
        for word in LATIN_WORD.findall(text):
            bare = word.strip("'’.-")
            if (
                len(bare) > 1
                and not re.search(r"[\d_]", bare)
                and bare.lower() not in PROPER_NAMES_LOWER
                and bare.lower() not in self.words
                and word.lower() not in self.words
            ):
                found.append(bare)
        return found

    def japanese_in_english(self, text: str) -> list[str]:
        """Runs of Japanese that are not stored data (a name, a description)."""
        return [run for run in JAPANESE.findall(text) if run not in self.text and run not in JAPANESE_IN_ENGLISH]


PROPER_NAMES_LOWER = frozenset(name.lower() for name in PROPER_NAMES)
# Japanese an English page may show: the yen sign's full-width form is not used; nothing else is allowed.
JAPANESE_IN_ENGLISH: frozenset[str] = frozenset()


def mixed_strings(page, language: str, vocabulary: Vocabulary) -> list[tuple[str, str]]:
    check = vocabulary.english_in_japanese if language == "ja" else vocabulary.japanese_in_english
    return [(kind, text) for kind, text in page.evaluate(EXTRACT_JS) if check(text)]


def admin_paths(page, base: str, selector: str, pattern: str) -> list[str]:
    hrefs = page.eval_on_selector_all(selector, "els => els.map(e => e.getAttribute('href'))")
    paths = {urlparse(urljoin(base, h)).path for h in hrefs if h}
    return sorted(p for p in paths if re.fullmatch(pattern, p))


def make_staff(django_user_model, username: str, perms: list[str]):
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user(username=username, password=f"{username}-password-123", is_staff=True)
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return user


def sign_in(browser, base: str, username: str, language: str):
    page = browser.new_page(locale="ja-JP" if language == "ja" else "en-US")
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", f"{username}-password-123")
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/")
    return page


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


ROLES = {
    # username: permissions ("staff" is the superuser admin_login signs in)
    "staff": None,
    "cinema": [
        f"cinema.{action}_{model}"
        for model in ("movie", "theater", "schedule", "reservation")
        for action in ("view", "add", "change", "delete")
    ],
    "ledger": ["ledger.view_account", "ledger.view_journalentry"],
    "nobody": [],
}


def superuser_paths(page, base: str, oauth_client, shot) -> list[str]:
    """Every admin URL the superuser reaches from the index, the staff pages, and a 403 every role meets."""
    from cinema.models import Movie, Reservation
    from merchant.models import Product

    page.goto(base + "/admin/")
    apps = admin_paths(page, base, "#content-main a, #nav-sidebar a", r"/admin/[a-z_]+/")
    changelists = admin_paths(page, base, "#content-main a", r"/admin/[a-z_]+/[a-z_]+/")
    adds = admin_paths(page, base, "#content-main a", r"/admin/[a-z_]+/[a-z_]+/add/")
    assert len(changelists) >= 20, changelists  # every project model and Django's users and groups
    changes = []
    for path in changelists:
        page.goto(base + path)
        rows = admin_paths(page, base, "#result_list tbody a", r"/admin/[a-z_]+/[a-z_]+/[^/]+/change/")
        changes += rows[:1]
    product = Product.objects.order_by("pk").first()
    sold = Reservation.objects.order_by("pk").values_list("schedule_id", flat=True).first()
    staff_pages = [
        reverse("admin:cinema_schedule_holders", args=[sold]),
        reverse("admin:cinema_movie_history", args=[Movie.objects.order_by("pk").values_list("pk", flat=True)[0]]),
        reverse("admin:ledger_balance_sheet"),
        reverse("admin:ledger_income_statement"),
        reverse("admin:ledger_income_statement") + "?start=2030-01-01&end=2020-01-01",  # the error message
        reverse("admin:ledger_trial_balance"),
        reverse("admin:geo_pointlookup_resolve"),
        reverse("admin:merchant_product_adjust_stock", args=[product.pk]),
        "/admin/password_change/",
        "/admin/mcpsite/toolcall/?created_at__day=1",  # the date hierarchy's deepest level
    ]
    return ["/admin/", *apps, *changelists, *adds, *changes, *staff_pages]


def form_flows(page, base: str) -> dict[str, list]:
    """Forms with their errors and the pages they lead to: a refused resolve, a stock change, a new API key."""
    from merchant.models import Product

    found: dict[str, list] = {}
    page.goto(base + reverse("admin:geo_pointlookup_resolve"))
    page.fill("#id_coordinates", "north,139")
    page.click("#resolve-form input[type=submit]")
    page.wait_for_selector(".errornote")  # the click returns once the POST starts, before the answer is shown
    assert page.locator(".errornote").count() == 1
    found["resolve (error)"] = page.evaluate(EXTRACT_JS)

    product = Product.objects.order_by("pk").first()
    page.goto(base + reverse("admin:merchant_product_adjust_stock", args=[product.pk]))
    page.select_option("#id_reason", "restock")
    page.fill("#id_quantity", "2")
    page.click("#content-main input[type=submit]")
    page.wait_for_selector(".messagelist")
    found["adjust stock (done)"] = page.evaluate(EXTRACT_JS)

    page.goto(base + "/admin/mcpsite/apikey/add/")
    page.fill("#id_name", "i18n")
    page.select_option("#id_owner", label="staff")
    page.check("input[name=scopes][value='cinema:read']")
    page.click("input[name=_save]")
    page.wait_for_selector("#new-api-key")
    found["API key created"] = page.evaluate(EXTRACT_JS)
    return found


@pytest.mark.django_db(transaction=True)
def test_every_admin_page_is_in_one_language_for_every_role(
    admin_login, live_server, django_user_model, monkeypatch, tmp_path
):
    oauth_client = seed_demo_world(monkeypatch)
    superuser = admin_login()
    browser = superuser.context.browser
    base = live_server.url
    paths = superuser_paths(superuser, base, oauth_client, tmp_path)
    # The remote sign-in's pages: the user's connected MCP clients, and the consent page (the sign-in page extends
    # the admin's login page).
    oauth_pages = [
        "/oauth/connections/",
        "/oauth/authorize/?response_type=code&scope=cinema+ledger&state=s&code_challenge_method=S256"
        f"&client_id={oauth_client.client_id}&redirect_uri=http://127.0.0.1:33418/callback"
        "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    ]
    for username, perms in ROLES.items():
        if perms is not None:
            make_staff(django_user_model, username, perms)

    problems: dict[str, list] = {}
    forbidden: dict[str, set[str]] = {}
    flows = {language: form_flows(sign_in(browser, base, "staff", language), base) for language in ("ja", "en")}
    vocabulary = Vocabulary()  # after every write the test makes
    for language, pages in flows.items():
        check = vocabulary.english_in_japanese if language == "ja" else vocabulary.japanese_in_english
        for name, strings in pages.items():
            if bad := [(kind, text) for kind, text in strings if check(text)]:
                problems[f"staff {language} {name}"] = bad

    for username, perms in ROLES.items():
        for language in ("ja", "en"):
            page = sign_in(browser, base, username, language)
            for path in [*paths, *(oauth_pages if perms is None else [])]:
                response = page.goto(base + path)
                status = response.status
                if perms is None:
                    assert status == 200, f"{username} {path}: HTTP {status}"
                else:
                    # Django's admin answers 404 for an app index with nothing the user may see.
                    assert status in (200, 403, 404), f"{username} {path}: HTTP {status}"
                if status in (403, 404):
                    forbidden.setdefault(username, set()).add(path)
                    # The admin's chrome, a translated message and the way back.
                    assert page.locator("#header #site-name").count() == 1, f"{username} {path}: no admin chrome"
                    assert page.locator(".breadcrumbs a[href='/admin/']").count() == 1
                if bad := mixed_strings(page, language, vocabulary):
                    problems[f"{username} {language} {path}"] = bad
                if username == "staff" and language == "ja" and path == "/admin/cinema/schedule/":
                    page.screenshot(path=str(tmp_path / "schedules-ja.png"), full_page=True)
            if username == "staff" and language == "en":
                index = page.goto(base + "/admin/") and page.text_content("#content-main")
                for text in ["Cinema", "Movies", "Schedules", "Accounting books", "Journal entries", "Tool calls"]:
                    assert text in index
            page.close()

    # Permissions held: each restricted role met 403s, and none for the lists it may open.
    assert "/admin/ledger/journalentry/" in forbidden["cinema"] and "/admin/cinema/schedule/" not in forbidden["cinema"]
    assert "/admin/cinema/schedule/" in forbidden["ledger"]
    assert "/admin/ledger/journalentry/" not in forbidden["ledger"]
    assert "/admin/cinema/schedule/" in forbidden["nobody"]
    assert len(paths) >= 60, paths
    assert not problems, "Strings in the other language:\n" + "\n".join(
        f"{where}: {kind}: {text!r}" for where, found in problems.items() for kind, text in found
    )
    print(f"screenshots: {tmp_path}")


def test_the_mixed_string_check_catches_what_it_must(db):
    """The checker itself: English words in Japanese text (titles included), Japanese in English, data aside."""
    vocabulary = Vocabulary()
    assert vocabulary.english_in_japanese("日付 で絞り込む") == []
    assert vocabulary.english_in_japanese("Filter by 日付") == ["Filter", "by"]
    assert vocabulary.english_in_japanese("A1: available") == ["available"]
    assert vocabulary.english_in_japanese("API キー (SKU-001)") == []
    assert vocabulary.japanese_in_english("Stock of 在庫") == ["在庫"]
    assert vocabulary.japanese_in_english("Seat map") == []


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
def test_staff_meet_403_and_404_inside_the_admin_in_their_language(client, django_user_model):
    """Not Django's bare English "403 Forbidden": the admin's header, a translated message and the way back."""
    clerk = django_user_model.objects.create_user("clerk", password="x" * 12, is_staff=True)
    client.force_login(clerk)
    for path, status in [("/admin/cinema/schedule/", 403), ("/admin/cinema/", 404), ("/admin/no-such-page/", 404)]:
        japanese = client.get(path)
        assert japanese.status_code == status
        page = japanese.content.decode()
        assert 'id="site-name"' in page and 'href="/admin/"' in page and "サイト管理に戻る" in page
        assert "Forbidden" not in page and "Not Found" not in page
        english = client.get(path, headers={"Accept-Language": "en"}).content.decode()
        assert "Back to the site administration" in english and "サイト管理" not in english
    assert "このページを開く権限がありません" in client.get("/admin/cinema/schedule/").content.decode()
    # Outside the admin (and for anyone not staff) Django's own pages answer.
    client.logout()
    assert client.get("/no-such-page/").status_code == 404


@pytest.mark.django_db
def test_staff_meet_a_500_inside_the_admin_in_their_language(admin_user, monkeypatch):
    """A failure that still happens is the admin's page in the staff's language, not Django's bare English."""
    from django.test import Client

    from ledger import selectors

    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(selectors, "trial_balance", broken)
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    japanese = client.get("/admin/ledger/account/reports/trial-balance/")
    page = japanese.content.decode()
    assert japanese.status_code == 500 and 'id="site-name"' in page and "サイト側で問題が起きました" in page
    assert "Server Error" not in page and "a bug" not in page
    english = client.get("/admin/ledger/account/reports/trial-balance/", headers={"Accept-Language": "en"})
    assert english.status_code == 500 and "Something went wrong on our side" in english.content.decode()


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
    for domain in ("django", "djangojs"):
        po = settings.BASE_DIR / "locale" / "ja" / "LC_MESSAGES" / f"{domain}.po"
        result = subprocess.run(
            [msgfmt, "--check", "--statistics", "-o", "/dev/null", str(po)], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
        assert re.fullmatch(r"\d+ translated messages\.\n", result.stderr), result.stderr


def test_the_admins_javascript_is_all_japanese():
    """Every string of Django's admin JavaScript (its English catalogue lists them) is in Django's Japanese
    catalogue or in ours (locale/ja/LC_MESSAGES/djangojs.po): a Django upgrade that adds one fails here."""
    import gettext
    from pathlib import Path

    import django

    def catalogue(path: Path) -> dict:
        with path.open("rb") as f:
            return gettext.GNUTranslations(f)._catalog

    def msgids(po: Path) -> list:
        """The keys a compiled catalogue uses (context\x04msgid; (msgid, 0) for plurals), read from a .po."""
        keys = []
        for entry in po.read_text().split("\n\n"):
            fields: dict[str, str] = {}
            name = None
            for line in entry.splitlines():
                if match := re.match(r'(msgctxt|msgid_plural|msgid|msgstr\S*) (".*")$', line):
                    name = match.group(1)
                    fields[name] = ast.literal_eval(match.group(2))
                elif line.startswith('"') and name:
                    fields[name] += ast.literal_eval(line)
            if fields.get("msgid"):
                key = (fields["msgctxt"] + "\x04" if "msgctxt" in fields else "") + fields["msgid"]
                keys.append((key, 0) if "msgid_plural" in fields else key)
        return keys

    admin_locale = Path(django.__file__).parent / "contrib" / "admin" / "locale"
    english = msgids(admin_locale / "en" / "LC_MESSAGES" / "djangojs.po")
    assert len(english) > 50
    japanese = catalogue(admin_locale / "ja" / "LC_MESSAGES" / "djangojs.mo")
    ours = catalogue(settings.BASE_DIR / "locale" / "ja" / "LC_MESSAGES" / "djangojs.mo")
    missing = [key for key in english if key and key not in japanese and key not in ours]
    assert not missing, missing


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
