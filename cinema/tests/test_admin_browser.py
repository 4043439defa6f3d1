"""The staff pages in a real browser: the seat map and the layout builder look and work right."""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.utils import timezone

from cinema import services
from cinema.models import Seat
from cinema.tests.conftest import make_movie, make_schedule, make_theater

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
    assert colour == "rgb(224, 88, 75)"  # reserved: red
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
