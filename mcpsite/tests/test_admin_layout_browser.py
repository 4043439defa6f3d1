"""Every screen and paper, in Chromium: each changelist's columns fit inside its scrolling container on a 1280 px
screen, the dashboard fits a 390 px phone, a list prints at full width without its filters and checkboxes, and
"View site" opens the site's landing page."""

from __future__ import annotations

import pytest

from mcpsite.tests.test_i18n import seed_demo_world, superuser_paths

pytestmark = pytest.mark.django_db(transaction=True)

# The container's content width over its visible width, and where the last column's right edge is.
COLUMNS_JS = """() => {
  const box = document.querySelector('#changelist .results');
  const last = document.querySelector('#result_list thead th:last-child');
  if (!box || !last) return null;
  const inner = box.getBoundingClientRect();
  return {scroll: box.scrollWidth, client: box.clientWidth, right: inner.right,
          last: last.getBoundingClientRect().right};
}"""


def test_every_changelist_shows_all_its_columns_at_1280_pixels(admin_login, live_server, monkeypatch, tmp_path):
    """Measured inside `.results`, the box that scrolls sideways: a column out of it is hidden from a staff member
    who does not think to scroll the table (the viewport's width says nothing about it)."""
    oauth_client = seed_demo_world(monkeypatch)
    page = admin_login()
    page.set_viewport_size({"width": 1280, "height": 800})
    paths = [p for p in superuser_paths(page, live_server.url, oauth_client, tmp_path) if p.count("/") == 4]
    hidden, measured = {}, 0
    for path in dict.fromkeys(paths):
        page.goto(live_server.url + path)
        box = page.evaluate(COLUMNS_JS)
        if box is None:
            continue
        measured += 1
        if box["scroll"] > box["client"] + 1 or box["last"] > box["right"] + 1:
            hidden[path] = box
            page.screenshot(path=str(tmp_path / f"{path.strip('/').replace('/', '-')}.png"))
    assert measured >= 20, measured
    assert not hidden, {path: round(box["last"] - box["right"]) for path, box in hidden.items()}


def test_the_dashboard_fits_a_phone(admin_login, live_server, monkeypatch):
    seed_demo_world(monkeypatch)
    page = admin_login()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live_server.url + "/admin/")
    page.wait_for_selector("#staff-dashboard")
    box = page.eval_on_selector("#staff-dashboard", "el => el.getBoundingClientRect().toJSON()")
    assert box["right"] <= 390, box
    widest = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('#staff-dashboard > section')]"
        ".map(s => s.getBoundingClientRect().right))"
    )
    assert widest <= 390, widest


def test_a_list_prints_full_width_without_filters_or_checkboxes(admin_login, live_server, monkeypatch):
    seed_demo_world(monkeypatch)
    page = admin_login()
    page.goto(live_server.url + "/admin/ledger/journalentry/")
    assert page.locator("#result_list td.action-checkbox").count() > 0
    page.emulate_media(media="print")
    page.set_viewport_size({"width": 720, "height": 1000})  # about an A4 sheet's printable width
    assert page.locator("#changelist-filter").is_hidden()
    assert page.locator("#result_list .action-checkbox").first.is_hidden()
    assert page.locator("#result_list .action-checkbox-column").is_hidden()
    width = page.evaluate("document.documentElement.clientWidth")
    table = page.eval_on_selector("#result_list", "el => el.getBoundingClientRect().toJSON()")
    assert table["width"] >= width * 0.95, (table, width)
    last = page.eval_on_selector("#result_list thead th:last-child", "el => el.getBoundingClientRect().right")
    assert last <= width + 1, (last, width)


@pytest.mark.parametrize(("locale", "words"), [("ja-JP", "スタッフのサインイン"), ("en-US", "Staff sign-in")])
def test_view_site_opens_the_landing_page(admin_login, live_server, locale, words):
    """The admin's "View site" leads to a page saying what the site is, where an agent connects and where staff
    sign in, in the visitor's language."""
    page = admin_login()
    href = page.get_attribute("#user-tools a[href='/']", "href")
    assert href == "/"
    visitor = page.context.browser.new_page(locale=locale)
    try:
        response = visitor.goto(live_server.url + href)
        assert response.status == 200
        text = visitor.inner_text("main")
        assert f"{live_server.url}/mcp" in text and "Authorization: Bearer" in text
        assert words in text
        assert visitor.get_attribute("a.staff-sign-in", "href") == "/admin/"
    finally:
        visitor.close()


def test_a_keyboard_user_skips_the_dashboard_and_meets_no_zero_bars(admin_login, live_server, monkeypatch):
    """A skip link, shown when focused, leads past the dashboard to the app list; a bar of zero is its value
    alone, no link and no tab stop."""
    seed_demo_world(monkeypatch)
    page = admin_login()
    page.goto(live_server.url + "/admin/")
    page.wait_for_selector("#staff-dashboard")
    for _ in range(15):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('dash-skip')"):
            break
    else:
        raise AssertionError("no skip link among the page's first 15 tab stops")
    box = page.eval_on_selector("a.dash-skip", "el => el.getBoundingClientRect().toJSON()")
    assert box["width"] > 0 and box["x"] >= 0 and box["y"] >= 0  # visible while focused
    page.keyboard.press("Enter")
    assert page.evaluate("location.hash") == "#content-main"
    assert page.locator("#staff-dashboard a.dash-bar[data-rows='0']").count() == 0
    assert page.locator("#staff-dashboard g.dash-bar.empty").count() > 0  # the zeros are there, as text


def test_a_keyboard_user_blocks_a_seat_and_sees_where_the_focus_is(admin_login, live_server):
    """The theater's seat checkboxes are in the tab order: Space blocks a seat, its label shows the focus (an
    outline), and the labels read at 4.5:1 at least, for sale and blocked."""
    from django.db import connection

    from cinema.models import Seat
    from cinema.tests.conftest import make_theater

    theater = make_theater("シアターK", rows=2, columns=3)
    page = admin_login()
    page.goto(f"{live_server.url}/admin/cinema/theater/{theater.pk}/change/")
    page.focus("#id_blocked_seats_0")  # A1, then Tab to A2
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_blocked_seats_1"
    page.keyboard.press("Space")
    label = "label[for=id_blocked_seats_1]"
    assert page.eval_on_selector(label, "el => getComputedStyle(el).outlineStyle") == "solid"
    colours = page.eval_on_selector(label, "el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]")
    assert colours == ["rgb(255, 255, 255)", "rgb(107, 107, 107)"]  # #fff on #6b6b6b: 5.3:1
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist")
    try:
        blocked = set(Seat.objects.filter(theater=theater, blocked=True).values_list("label", flat=True))
    finally:
        connection.close()  # opened while Playwright's loop ran (see cinema/tests/test_admin_browser.py)
    assert blocked == {"A2"}


CONTRAST_JS = """([selector, property]) => {
  const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const linear = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = c => { const [r, g, b] = c.map(linear); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const el = document.querySelector(selector);
  const fg = lum(rgb(getComputedStyle(el)[property]));
  const bg = lum(rgb(getComputedStyle(document.body).backgroundColor));
  return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
}"""


def test_the_dashboard_in_dark_mode_keeps_its_contrast(live_server, chromium, django_user_model, monkeypatch):
    """With the system's dark mode, the balance mark reads at 4.5:1 and the solid bars stand at 3:1 on the page."""
    seed_demo_world(monkeypatch)
    django_user_model.objects.create_superuser(username="night", password="night-password-123")
    context = chromium.get().new_context(locale="ja-JP", color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/admin/login/")
        page.fill("#id_username", "night")
        page.fill("#id_password", "night-password-123")
        page.click("input[type=submit]")
        page.wait_for_selector("#staff-dashboard")
        assert page.evaluate(CONTRAST_JS, ["#staff-dashboard .balanced", "color"]) >= 4.5
        assert page.evaluate(CONTRAST_JS, [".dash-solid-fill", "fill"]) >= 3
    finally:
        context.close()
