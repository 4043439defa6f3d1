"""The date and time style as staff read it in Chromium: the show list and a show's seat map in Japanese and English
give the show's day with its weekday and its time without seconds, the seat map's time box included. With
DOCS_IMAGES set, the reservation list's table is saved there in both languages (docs/staff-pages.md):

    DOCS_IMAGES=docs/images .venv/bin/pytest mcpsite/tests/test_date_style_browser.py
"""

from __future__ import annotations

import os
import re

import pytest

from .test_date_style import EN_DAY, JA_DAY, SECONDS, SHOW_DAY
from .test_date_style import show as show  # noqa: F401  (the fixture)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("locale", "show_day"), [("ja-JP", JA_DAY), ("en-US", EN_DAY)])
def test_the_show_list_and_seat_map_read_in_the_one_style(
    chromium, live_server, django_user_model, show, locale, show_day
):  # noqa: F811
    django_user_model.objects.create_superuser("staff", password="staff-password-123")
    context = chromium.get().new_context(locale=locale)
    page = context.new_page()
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "staff")
    page.fill("#id_password", "staff-password-123")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    page.goto(f"{live_server.url}/admin/cinema/schedule/?date__gte={SHOW_DAY.isoformat()}")
    row = page.locator("#result_list tbody tr").first
    assert show_day in row.inner_text() and "18:30" in row.inner_text()
    page.goto(f"{live_server.url}/admin/cinema/schedule/{show.pk}/change/")
    assert page.input_value("#id_start_time") == "18:30"
    text = page.inner_text("#content")
    assert show_day in text and not SECONDS.search(text)
    assert not re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", text)
    if folder := os.environ.get("DOCS_IMAGES"):
        page.goto(f"{live_server.url}/admin/cinema/reservation/")
        page.locator("#result_list").screenshot(path=os.path.join(folder, f"reservations-{locale[:2]}.png"))
    context.close()
