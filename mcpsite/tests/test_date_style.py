"""One date and time style on the staff's pages (mcpsite/formats/): a day with its weekday, a show's time without
seconds, a moment as the day and HH:MM; in Japanese and the English equivalent. Exports keep ISO dates in their
data cells."""

from __future__ import annotations

import datetime
import re
import zoneinfo
from decimal import Decimal

import pytest
from django.utils import translation

from cinema import services as cinema_services
from cinema.models import Reservation
from cinema.tests.conftest import make_movie, make_schedule, make_theater
from ledger import seeding
from ledger import services as ledger_services
from ledger.services import LineInput
from mcpsite.formats import day, moment_in, time_of_day

pytestmark = pytest.mark.django_db

SHOW_DAY = datetime.date(2030, 11, 30)  # a Saturday
SECONDS = re.compile(r"\b\d{1,2}:\d{2}:\d{2}\b")
JA_DAY = "2030年11月30日(土)"
EN_DAY = "Sat, Nov 30, 2030"


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        (
            "ja",
            ["2026年11月28日(土)", "10:00", "2026年11月28日(土) 09:27", "2026年11月28日(土) 09:27 (America/New_York)"],
        ),
        (
            "en",
            ["Sat, Nov 28, 2026", "10:00", "Sat, Nov 28, 2026, 09:27", "Sat, Nov 28, 2026, 09:27 (America/New_York)"],
        ),
    ],
)
def test_one_format_per_kind_of_value(language, expected):
    tokyo, new_york = zoneinfo.ZoneInfo("Asia/Tokyo"), zoneinfo.ZoneInfo("America/New_York")
    moment = datetime.datetime(2026, 11, 28, 9, 27, 41, tzinfo=tokyo)
    with translation.override(language):
        assert [
            day(datetime.date(2026, 11, 28)),
            time_of_day(datetime.time(10, 0, 30)),
            moment_in(moment, tokyo),
            moment_in(moment.replace(tzinfo=new_york), new_york),
        ] == expected


@pytest.fixture
def show(db):
    theater, movie = make_theater("シアター1", rows=3, columns=4), make_movie("スタームービー")
    show = make_schedule(movie, theater, SHOW_DAY, "18:30", "20:30")
    cinema_services.reservation_create(
        schedule_id=show.public_id, seats=["A1"], password="mypassword123", customer_name="田中太郎"
    )
    return show


def page(client, url: str, language: str) -> str:
    response = client.get(url, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200, url
    return response.content.decode()


@pytest.mark.parametrize(("language", "show_day"), [("ja", JA_DAY), ("en", EN_DAY)])
def test_show_pages_give_the_day_with_its_weekday_and_the_time_without_seconds(admin_client, show, language, show_day):
    reservation = Reservation.objects.get()
    pages = {
        "schedule list": "/admin/cinema/schedule/?day=all",
        "seat map": f"/admin/cinema/schedule/{show.pk}/change/",
        "print sheet": f"/admin/cinema/schedule/{show.pk}/print/",
        "day sheet": f"/admin/cinema/theater/{show.theater_id}/day-sheet/?date={SHOW_DAY.isoformat()}",
        "reservation list": "/admin/cinema/reservation/",
        "reservation": f"/admin/cinema/reservation/{reservation.pk}/change/",
    }
    for name, url in pages.items():
        html = page(admin_client, url, language)
        assert show_day in html, name
        assert "18:30" in html, name
        assert not SECONDS.search(html), (name, SECONDS.search(html))
        assert "2030-11-30 18:30" not in html, name  # the ISO style the show's label had


@pytest.mark.parametrize(("language", "as_of"), [("ja", "2027年3月31日(水)"), ("en", "Wed, Mar 31, 2027")])
def test_report_dates_carry_their_weekday(admin_client, language, as_of):
    seeding.chart_of_accounts_ensure()
    ledger_services.journal_entry_create(
        date=datetime.date(2027, 3, 1),
        description="売上",
        lines=[LineInput("400", credit=Decimal(100)), LineInput("100", debit=Decimal(100))],
    )
    for report in ("balance-sheet", "trial-balance"):
        assert as_of in page(admin_client, f"/admin/ledger/account/reports/{report}/?as_of=2027-03-31", language)


def test_exports_keep_iso_dates_in_their_cells(admin_client, show):
    response = admin_client.get("/admin/cinema/reservation/export.csv")
    csv = b"".join(response.streaming_content).decode("utf-8-sig")
    assert SHOW_DAY.isoformat() in csv and JA_DAY not in csv
