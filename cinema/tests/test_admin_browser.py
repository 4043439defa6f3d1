"""The staff pages in a real browser: the seat map and the layout builder look and work right."""

from __future__ import annotations

import datetime
import re

import pytest
from django.db import connection
from django.utils import timezone

from cinema import services
from cinema.models import Seat
from cinema.tests.conftest import make_movie, make_schedule, make_theater
from mcpsite.tests.docs_images import screenshot_in_both_languages

pytestmark = pytest.mark.django_db(transaction=True)


def test_seat_map_and_layout_builder(admin_login, live_server):
    theater = make_theater("シアター1", rows=8, columns=12, blocked={"A1", "A12"})
    show = make_schedule(make_movie(), theater, timezone.localdate() + datetime.timedelta(days=1), "18:00")
    services.reservation_create(schedule_id=show.public_id, seats=["D5", "D6", "D7"], password="mypassword123")
    page = admin_login()

    page.goto(f"{live_server.url}/admin/cinema/schedule/{show.pk}/change/")
    page.wait_for_selector(".cinema-seat-map")
    page.screenshot(path="/tmp/cinema-seat-map.png", full_page=True)
    colour = page.eval_on_selector('[data-seat="D6"]', "el => getComputedStyle(el).backgroundColor")
    assert colour == "rgb(192, 57, 43)"  # reserved: red
    assert page.eval_on_selector('[data-seat="A1"]', "el => el.className") == "seat blocked"
    assert page.locator(".cinema-seat-map [data-seat].available").count() == 96 - 2 - 3

    page.goto(f"{live_server.url}/admin/cinema/theater/{theater.pk}/change/")
    page.click('label[for="id_blocked_seats_13"]')  # B2: block it
    page.click('label[for="id_blocked_seats_0"]')  # A1: unblock it
    page.screenshot(path="/tmp/cinema-layout-builder.png", full_page=True)
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist")
    try:
        blocked = set(Seat.objects.filter(theater=theater, blocked=True).values_list("label", flat=True))
    finally:
        # While Playwright's loop runs, asgiref gives this code a context-local connection that
        # pytest-django's teardown cannot see; close it here or the test database cannot be dropped.
        connection.close()
    assert blocked == {"A12", "B2"}


def test_schedule_and_reservation_lists_fit_a_1280_pixel_screen(admin_login, live_server):
    """The sold column is not cut off and a reservation's show stays on one line, even with a long title."""
    theater = make_theater("シアター1", rows=4, columns=10)
    movie = make_movie(
        "劇場版 とても長い題名の映画 〜ある夏の日の出来事と、その後の十年間の物語〜 ディレクターズカット"
    )
    tomorrow = timezone.localdate() + datetime.timedelta(days=1)  # bookable whatever the time of day the test runs
    show = make_schedule(movie, theater, tomorrow, "18:00", "20:30")
    services.reservation_create(
        schedule_id=show.public_id, seats=["A1", "A2"], password="mypassword123", customer_name="山田花子"
    )
    page = admin_login()
    page.set_viewport_size({"width": 1280, "height": 800})
    width = page.evaluate("document.documentElement.clientWidth")

    page.goto(f"{live_server.url}/admin/cinema/schedule/")
    sold = page.locator("#result_list td.field-sold").first
    assert sold.bounding_box()["x"] + sold.bounding_box()["width"] <= width
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing hidden to the right

    page.goto(f"{live_server.url}/admin/cinema/reservation/")
    cell = page.locator("#result_list td.field-show").first
    # One line: the text's boxes all share one line (their vertical middles within half a line of each other).
    middles = cell.evaluate(
        """el => { const range = document.createRange(); range.selectNodeContents(el);
                   return [...range.getClientRects()].map(r => r.top + r.height / 2); }"""
    )
    line = cell.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)")
    assert max(middles) - min(middles) < line / 2, (middles, line)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.get_attribute("#result_list td.field-show .cinema-title", "title") == movie.title


def test_seat_map_and_day_sheet_print_as_pdf_pages(admin_login, live_server, tmp_path):
    """Chromium prints the show's seat map on one A4 page and the theater's day on one page per show, without the
    admin's header, sidebar or buttons, with the seat colours."""
    theater = make_theater("シアター1", rows=8, columns=12)
    movie = make_movie()
    day = timezone.localdate() + datetime.timedelta(days=1)
    shows = [make_schedule(movie, theater, day, start, end) for start, end in [("10:00", "12:00"), ("13:00", "15:00")]]
    make_schedule(movie, theater, day, "18:00", "20:00")
    services.reservation_create(
        schedule_id=shows[0].public_id, seats=["D5", "D6"], password="mypassword123", customer_name="山田花子"
    )
    page = admin_login()

    def pdf_pages(url: str, name: str) -> int:
        page.goto(url)
        assert page.is_enabled("button[data-print]")  # print-button.js has run
        page.emulate_media(media="print")
        assert page.locator("#header").is_hidden() and page.locator(".breadcrumbs").is_hidden()
        assert page.locator("button[data-print]").is_hidden()
        pdf = page.pdf(path=str(tmp_path / name), format="A4", print_background=True)
        page.emulate_media(media="screen")
        return len(re.findall(rb"/Type\s*/Page\b", pdf))

    seat_map = f"{live_server.url}/admin/cinema/schedule/{shows[0].pk}/print/"
    assert pdf_pages(seat_map, "seat-map.pdf") == 1
    page.emulate_media(media="print")
    assert page.eval_on_selector('[data-seat="D6"]', "el => getComputedStyle(el).backgroundColor") == "rgb(192, 57, 43)"
    assert "山田花子" in page.inner_text("table.print-bookings")
    page.emulate_media(media="screen")

    sheet = f"{live_server.url}/admin/cinema/theater/{theater.pk}/day-sheet/?date={day.isoformat()}"
    assert pdf_pages(sheet, "day-sheet.pdf") == 3  # one page per show
    print(f"PDFs: {tmp_path}")


def test_print_pages_need_the_reservations_view_permission(client, django_user_model):
    from django.contrib.auth.models import Permission

    theater = make_theater("シアター1", rows=2, columns=2)
    show = make_schedule(make_movie(), theater, timezone.localdate(), "10:00")
    clerk = django_user_model.objects.create_user("clerk", password="x" * 12, is_staff=True)
    for codename in ("view_schedule", "view_theater"):
        clerk.user_permissions.add(Permission.objects.get(codename=codename))
    client.force_login(clerk)
    urls = [f"/admin/cinema/schedule/{show.pk}/print/", f"/admin/cinema/theater/{theater.pk}/day-sheet/"]
    assert [client.get(url).status_code for url in urls] == [403, 403]
    clerk.user_permissions.add(Permission.objects.get(codename="view_reservation"))
    client.force_login(django_user_model.objects.get(pk=clerk.pk))
    assert [client.get(url).status_code for url in urls] == [200, 200]


def test_seats_blocked_for_one_show_with_the_keyboard(admin_login, live_server):
    """The show's page blocks seats for it alone with the theater's seat grid: Tab reaches each seat that can be
    blocked, Space ticks it; a sold seat and a seat the theater blocks cannot be ticked."""
    from cinema.models import ShowSeatBlock

    theater = make_theater("シアター1", rows=3, columns=4, blocked={"A1"})
    show = make_schedule(make_movie(), theater, timezone.localdate() + datetime.timedelta(days=1), "18:00")
    services.reservation_create(schedule_id=show.public_id, seats=["B1"], password="mypassword123")
    page = admin_login()
    page.goto(f"{live_server.url}/admin/cinema/schedule/{show.pk}/change/")
    grid = ".cinema-seat-grid"
    assert page.is_disabled(f'{grid} input[value="A1"]') and page.is_disabled(f'{grid} input[value="B1"]')
    page.focus(f'{grid} input[value="A2"]')
    page.keyboard.press("Space")  # A2: blocked
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # A4
    page.keyboard.press("Space")
    page.keyboard.press("Tab")  # B2 (B1 is sold: no tab stop)
    assert page.evaluate("document.activeElement.value") == "B2"
    outline = page.eval_on_selector(
        f'{grid} label[for="{page.evaluate("document.activeElement.id")}"]', "el => getComputedStyle(el).outlineStyle"
    )
    assert outline == "solid"  # its label shows the focus
    page.screenshot(path="/tmp/cinema-show-seat-blocks.png", full_page=True)
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist")
    assert page.eval_on_selector('.cinema-seat-map [data-seat="A2"]', "el => el.className") == "seat blocked"
    try:
        blocked = set(ShowSeatBlock.objects.filter(schedule=show).values_list("seat__label", flat=True))
    finally:
        connection.close()
    assert blocked == {"A2", "A4"}
    change = f"{live_server.url}/admin/cinema/schedule/{show.pk}/change/"
    screenshot_in_both_languages(page, change, ".field-blocked_seats", "show-seat-blocks")


def test_seat_holders_page_searches_kana_folded(admin_login, live_server):
    """From the show's page to its seat holders; ﾃﾞﾓ typed in the search box finds デモ顧客."""
    theater = make_theater("シアター1", rows=3, columns=4)
    show = make_schedule(make_movie(), theater, timezone.localdate() + datetime.timedelta(days=1), "18:00")
    for name, seats in (("デモ顧客", ["A1", "A2"]), ("田中太郎", ["B3"])):
        services.reservation_create(
            schedule_id=show.public_id, seats=seats, password="mypassword123", customer_name=name
        )
    page = admin_login()
    page.goto(f"{live_server.url}/admin/cinema/schedule/{show.pk}/change/")
    page.click("text=座席の予約者")
    assert page.locator("#seat-holders tbody tr").count() == 3
    page.fill("#holders-q", "ﾃﾞﾓ")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"\?q="))
    rows = page.locator("#seat-holders tbody tr").all_inner_texts()
    page.screenshot(path="/tmp/cinema-seat-holders.png", full_page=True)
    assert [row.split("\t")[0] for row in rows] == ["A1", "A2"] and all("デモ顧客" in row for row in rows)
    screenshot_in_both_languages(page, page.url, "#content-main", "seat-holders")
