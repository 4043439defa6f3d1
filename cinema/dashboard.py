"""The cinema's blocks on the staff dashboard (mcpsite/dashboard.py): today's and tomorrow's shows, bookings per day."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from mcpsite.dashboard import Block, Link, Viewer, changelist, daily_counts_chart, number

from . import selectors

SHOWS_PER_DAY = 10
ACTIVITY_DAYS = 14


@dataclass(frozen=True, slots=True)
class ShowLine:
    show: selectors.ShowOccupancy
    seat_map: str  # the show's change page (its seat map)
    booked: Link  # its confirmed reservations


@dataclass(frozen=True, slots=True)
class DayBlock:
    date: datetime.date
    heading: str
    all_shows: Link
    ended: int  # shows that day that have ended (not listed)
    shows: list[ShowLine]


def shows_block(viewer: Viewer) -> Block | None:
    if not viewer.may("cinema.view_schedule", "cinema.view_reservation"):
        return None
    days = []
    now = timezone.localtime(viewer.now).time()
    for day, heading, after in [
        (viewer.today, gettext("Today"), now),
        (viewer.today + datetime.timedelta(days=1), gettext("Tomorrow"), None),
    ]:
        board = selectors.show_occupancy_list(date=day, limit=SHOWS_PER_DAY, after=after)
        lines = [
            ShowLine(
                show=show,
                seat_map=reverse("admin:cinema_schedule_change", args=[show.schedule_pk]),
                booked=Link(
                    f"{show.booked} / {show.capacity}",
                    changelist("cinema.reservation", schedule__id__exact=show.schedule_pk, status__exact="confirmed"),
                ),
            )
            for show in board.shows
        ]
        all_shows = Link(number(board.total), changelist("cinema.schedule", date=day.isoformat()), board.total)
        days.append(DayBlock(day, heading, all_shows, board.ended, lines))
    return Block(
        "dash-shows", gettext("Shows today and tomorrow"), "admin/dashboard/cinema_shows.html", days, wide=True
    )


def bookings_block(viewer: Viewer) -> Block | None:
    """Reservations made per day (cancelled ones too: they were bookings that day)."""
    if not viewer.may("cinema.view_reservation"):
        return None
    title = gettext("Bookings, last %(days)d days") % {"days": ACTIVITY_DAYS}
    chart = daily_counts_chart(
        chart_id="bookings",
        title=title,
        series=gettext("Bookings"),
        today=viewer.today,
        days=ACTIVITY_DAYS,
        counts=lambda since, until: selectors.reservation_counts_by_day(since=since, until=until),
        model="cinema.reservation",
        field="reserved_at",
    )
    return Block("dash-bookings", gettext("Bookings"), "admin/dashboard/chart_block.html", chart)
