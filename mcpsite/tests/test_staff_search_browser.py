"""The header's search box in Chromium: typed in half-width kana on a Japanese page, the reservation found and
opened; the results in English too. With DOCS_IMAGES set, the results page is saved there in both languages
(docs/staff-pages.md):

    DOCS_IMAGES=docs/images .venv/bin/pytest mcpsite/tests/test_staff_search_browser.py
"""

from __future__ import annotations

import os
import re

import pytest

from .test_staff_search import staff_search_world


@pytest.mark.django_db(transaction=True)
def test_the_header_box_finds_a_reservation_typed_in_half_width_kana_and_opens_it(
    chromium, live_server, django_user_model
):
    users = staff_search_world(django_user_model)
    users["superuser"].set_password("admin-password-123")
    users["superuser"].save()
    for language in ("ja", "en"):
        context = chromium.get().new_context(locale=f"{language}-{'JP' if language == 'ja' else 'US'}")
        page = context.new_page()
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto(f"{live_server.url}/admin/login/")
        page.fill("#id_username", "admin")
        page.fill("#id_password", "admin-password-123")
        page.click("input[type=submit]")
        page.wait_for_url(f"{live_server.url}/admin/")
        box = page.get_by_role("search").get_by_role("searchbox")
        box.fill("ﾃﾞﾓ")
        box.press("Enter")
        page.wait_for_url(re.compile(r"/admin/search/\?q="))
        heading = "予約" if language == "ja" else "Reservations"
        group = page.locator("section.staff-search-group", has=page.get_by_role("heading", name=heading, exact=True))
        assert group.get_by_role("link").count() >= 10
        assert box.input_value() == "ﾃﾞﾓ"  # the box keeps what was searched
        if folder := os.environ.get("DOCS_IMAGES"):
            page.screenshot(path=os.path.join(folder, f"staff-search-{language}.png"), full_page=True)
        group.get_by_role("link", name=re.compile("デモ顧客")).first.click()
        page.wait_for_url(re.compile(r"/admin/cinema/reservation/\d+/change/"))
        assert "デモ顧客" in page.text_content("#content-main")
        context.close()
