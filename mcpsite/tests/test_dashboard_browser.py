"""The dashboard in a real browser (Debian Chromium through Playwright): what a cinema-only staff member and a
superuser each see, a chart's bar followed to its changelist, and full-page screenshots of the dashboard and a
seat map in Japanese and English, saved under the test's output directory (printed at the end).

The screenshots in the docs are this test's: the dashboard's blocks (without the app list below them) in English
(docs/images/dashboard.png, the README's) and Japanese (dashboard-ja.png), and a show's seat map in both
(seat-map-en.png, seat-map-ja.png). To regenerate them:

    DOCS_IMAGES=docs/images .venv/bin/pytest mcpsite/tests/test_dashboard_browser.py
"""

from __future__ import annotations

import os
import shutil

import pytest

from ledger.seeding import YEAR_START
from ledger.selectors import fiscal_year_of

from .test_dashboard import seed_dashboard_world, staff_user

BLOCKS = ["dash-shows", "dash-bookings", "dash-ledger", "dash-sales", "dash-stock", "dash-reminders", "dash-tool-calls"]


def log_in(page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/")


def blocks_shown(page) -> list[str]:
    return [block for block in BLOCKS if page.locator(f"#{block}").count()]


@pytest.mark.django_db(transaction=True)
def test_dashboard_per_staff_member_links_and_screenshots(
    admin_login, live_server, monkeypatch, tmp_path, django_user_model
):
    seed_dashboard_world(monkeypatch)
    base = live_server.url

    # A cinema-only staff member: the cinema's blocks only (its bookings chart, no sales).
    staff_user(django_user_model, "cinema", "cinema")
    page = admin_login()  # (starts the browser; logged in as a superuser)
    cinema = page.context.browser.new_page(locale="ja-JP")
    log_in(cinema, base, "cinema", "pw-" + "cinema" * 3)
    assert blocks_shown(cinema) == ["dash-shows", "dash-bookings"]
    assert [t.strip() for t in cinema.locator("#chart-bookings .dash-legend li").all_inner_texts()] == ["予約"]
    assert cinema.locator("#dash-shows h3").first.inner_text().startswith("今日")
    cinema.screenshot(path=str(tmp_path / "dashboard-cinema-staff-ja.png"), full_page=True)
    cinema.close()

    # The superuser sees every block, in Japanese.
    page.goto(f"{base}/admin/")
    assert blocks_shown(page) == BLOCKS
    assert page.locator("#trial-balance").inner_text() == "✓ 貸借一致"
    assert page.locator("#dash-tool-calls caption").all_inner_texts() == ["ツール別", "APIキー別"]
    page.screenshot(path=str(tmp_path / "dashboard-ja.png"), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.locator("#staff-dashboard").screenshot(path=str(tmp_path / "dashboard-ja-blocks.png"))

    # A chart's bar leads to the changelist behind it, listing exactly that many rows.
    bar = page.locator("#chart-bookings a.series-0:not([data-rows='0'])").last
    rows = int(bar.get_attribute("data-rows"))
    bar.click()
    page.wait_for_url("**/admin/cinema/reservation/?*")
    assert "reserved_at__gte" in page.url and page.locator("#result_list tbody tr").count() == rows
    assert page.locator("#changelist-filter").count() == 1  # the changelist itself, not an error page

    # A show's occupancy bar leads to its seat map.
    page.goto(f"{base}/admin/")
    page.locator("#dash-shows td a[href$='/change/']").first.click()
    page.wait_for_selector(".cinema-seat-map")
    page.screenshot(path=str(tmp_path / "seat-map-ja.png"), full_page=True)
    seat_map = page.url

    # The same pages for a browser that asks for English.
    english = page.context.browser.new_page(locale="en-US", viewport={"width": 1400, "height": 900})
    english.context.add_cookies(page.context.cookies())
    english.goto(f"{base}/admin/")  # opens on the demo's books: the latest fiscal year with entries
    assert str(fiscal_year_of(day=YEAR_START)) in english.locator("#dash-ledger h2").inner_text()
    assert english.locator("#dash-shows h2").inner_text() == "Shows today and tomorrow"
    assert english.locator("#trial-balance").inner_text() == "✓ Debits equal credits"
    english.screenshot(path=str(tmp_path / "dashboard-en.png"), full_page=True)
    english.locator("#staff-dashboard").screenshot(path=str(tmp_path / "dashboard-en-blocks.png"))
    english.goto(seat_map)
    english.wait_for_selector(".cinema-seat-map")
    english.screenshot(path=str(tmp_path / "seat-map-en.png"), full_page=True)

    if images := os.environ.get("DOCS_IMAGES"):
        for shot, name in [
            ("dashboard-en-blocks.png", "dashboard.png"),
            ("dashboard-ja-blocks.png", "dashboard-ja.png"),
            ("seat-map-en.png", "seat-map-en.png"),
            ("seat-map-ja.png", "seat-map-ja.png"),
        ]:
            shutil.copyfile(tmp_path / shot, os.path.join(images, name))
    print(f"screenshots: {tmp_path}")
