"""The staff dashboard on the admin index: who sees which block, where every number leads, what the numbers say,
and a query count that does not grow with the data (1,000 shows, 100,000 tool calls).

The browser half (two staff members, a chart's link, screenshots) is test_dashboard_browser.py.
"""

from __future__ import annotations

import datetime
import math
import random
import re
from decimal import Decimal
from html import unescape

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from cinema.models import Movie, ReservedSeat, Schedule, Seat, Theater
from mcpsite.dashboard import dashboard_build
from mcpsite.models import ApiKey, ToolCall
from mcpsite.selectors import tool_call_stats

LINK = re.compile(r"<a (?P<attrs>[^>]*)>")


def dashboard_html(client) -> str:
    html = client.get("/admin/").content.decode()
    start = html.index('<div id="staff-dashboard">')
    return html[start : html.index('<div id="content-main"', start)]


def dashboard_links(html: str) -> list[tuple[str, int | None]]:
    links = []
    for tag in LINK.finditer(html):
        href = re.search(r'href="([^"]+)"', tag["attrs"])
        rows = re.search(r'data-rows="(\d+)"', tag["attrs"])
        links.append((unescape(href.group(1)), int(rows.group(1)) if rows else None))
    return links


def staff_user(django_user_model, username: str, *apps: str):
    """A staff member with every permission of `apps` (and nothing else)."""
    user = django_user_model.objects.create_user(username=username, password="pw-" + username * 3, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label__in=apps))
    return user


def seed_dashboard_world(monkeypatch) -> ApiKey:
    """The i18n crawl's world (`make demo`'s data with a failed message and the like), plus what the dashboard
    shows: tool calls, a failed reminder delivery, sales, a product running out, bookings over 14 days."""
    from cinema.models import Reservation
    from merchant import services as merchant_services
    from merchant.models import InventoryMovement, Product
    from reminders.models import Reminder, ReminderDelivery

    from .test_i18n import seed_demo_world

    seed_demo_world(monkeypatch)
    key = ApiKey.objects.get(name="demo key")
    now = timezone.now()
    ToolCall.objects.bulk_create(
        ToolCall(
            api_key=key if i % 3 else None,
            transport="http",
            tool=["get_movie_list", "reserve_seats", "search_products"][i % 3],
            duration_ms=5 + (i * 7) % 90,
            outcome="error" if i % 11 == 0 else "ok",
            request_id=f"r{i}",
            created_at=now - datetime.timedelta(minutes=i),
        )
        for i in range(60)
    )
    ToolCall.objects.create(
        tool="get_movie_list",
        transport="http",
        outcome="ok",
        request_id="old",
        created_at=now - datetime.timedelta(days=2),
    )
    products = list(Product.objects.filter(inventory_count__gt=6).order_by("pk")[:6])
    for product in products[2:]:
        for units in (1, 2, 3):
            merchant_services.inventory_adjust(product_id=product.pk, delta=-units, reason="sale", note="", actor=None)
    merchant_services.inventory_adjust(product_id=products[0].pk, delta=-2, reason="sale", note="", actor=None)
    merchant_services.inventory_adjust(
        product_id=products[1].pk, delta=-products[1].inventory_count, reason="sale", note="", actor=None
    )
    # The demo books and sells everything "now"; spread it over the dashboard's 14 days.
    for n, pk in enumerate(Reservation.objects.order_by("pk").values_list("pk", flat=True)):
        Reservation.objects.filter(pk=pk).update(reserved_at=now - datetime.timedelta(days=n % 9 + n % 5, hours=n % 7))
    for n, pk in enumerate(InventoryMovement.objects.filter(reason="sale").values_list("pk", flat=True)):
        InventoryMovement.objects.filter(pk=pk).update(created_at=now - datetime.timedelta(days=n * 3))
    reminder = Reminder.objects.first()
    ReminderDelivery.objects.create(
        reminder=reminder,
        occurrence_at=reminder.time + datetime.timedelta(days=1),
        delivered_at=now,
        channel="email",
        status="failed",
        error="SMTP 550",
    )
    return key


@pytest.fixture
def demo_world(db, monkeypatch):
    return seed_dashboard_world(monkeypatch)


# --- who sees what ------------------------------------------------------------------------------------------


def test_each_block_only_for_staff_who_may_see_that_app(demo_world, client, admin_client, django_user_model):
    cinema_staff = staff_user(django_user_model, "cinema", "cinema")
    client.force_login(cinema_staff)
    html = dashboard_html(client)
    assert 'id="dash-shows"' in html and 'id="dash-bookings"' in html
    for block in ("dash-sales", "dash-ledger", "dash-stock", "dash-reminders", "dash-tool-calls"):
        assert f'id="{block}"' not in html
    assert "/admin/merchant/" not in html
    assert all(href.startswith("/admin/cinema/") for href, _rows in dashboard_links(html))

    everything = dashboard_html(admin_client)
    blocks = ["dash-shows", "dash-bookings", "dash-ledger", "dash-sales", "dash-stock", "dash-reminders"]
    assert re.findall(r'<section id="([^"]+)"', everything) == [*blocks, "dash-tool-calls"]

    nobody = django_user_model.objects.create_user(username="nobody", password="x" * 12, is_staff=True)
    client.force_login(nobody)
    assert 'id="staff-dashboard"' not in client.get("/admin/").content.decode()


def test_the_dashboard_is_on_the_site_index_only(demo_world, admin_client):
    assert 'id="staff-dashboard"' not in admin_client.get("/admin/cinema/").content.decode()


# --- every number opens its rows ----------------------------------------------------------------------------


def test_every_number_links_to_a_working_filtered_changelist_with_those_rows(demo_world, admin_client):
    links = dashboard_links(dashboard_html(admin_client))
    counted = [(href, rows) for href, rows in links if rows is not None]
    assert len(links) > 60 and len(counted) > 20  # (a bar of zero is no link: nothing to list)
    assert any(rows for _href, rows in counted)  # not only zeros
    for href, rows in links:
        response = admin_client.get(href)
        # A changelist refusing a lookup redirects to ?e=1 (or answers 400): every filter must be one it accepts.
        assert response.status_code == 200, href
        if rows is not None:
            assert response.context["cl"].result_count == rows, href


def test_numbers_match_the_data(demo_world, admin_client):
    html = dashboard_html(admin_client)
    tools = re.search(r"<caption>ツール別</caption>.*?</table>", html, re.S).group(0)
    # get_movie_list: the 20 calls of the last 24 hours (i % 3 == 0) and the i18n world's one, not the one two
    # days old.
    row = re.search(r"<td>get_movie_list</td>(.*?)</tr>", tools, re.S).group(1)
    calls, failed = [int(n) for n in re.findall(r'data-rows="(\d+)"', row)]
    assert calls == 21 and failed == len([i for i in range(0, 60, 3) if i % 11 == 0])
    assert 'id="trial-balance"' in html and "貸借一致" in html


def test_stock_and_reminder_links_count_what_they_say(demo_world, admin_client):
    from merchant.models import Product

    html = dashboard_html(admin_client)
    stock = dict(
        (href.split("stock=")[1].split("&")[0], rows) for href, rows in dashboard_links(html) if "stock=" in href
    )
    assert stock["out"] == Product.objects.filter(active=True, inventory_count=0).count() >= 1
    assert "/admin/reminders/message/?status__exact=failed" in html.replace("&amp;", "&")
    assert any("/admin/reminders/reminderdelivery/" in href and rows == 1 for href, rows in dashboard_links(html))


# --- the figures' selectors ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_p95_is_the_nearest_rank_of_each_group_and_no_rows_are_loaded(make_api_key):
    rng = random.Random(16)
    keys = [make_api_key(name=f"k{i}")[0] for i in range(3)]
    now = timezone.now()
    calls = [
        ToolCall(
            tool=rng.choice(["a", "b", "c"]),
            api_key=rng.choice([*keys, None]),
            duration_ms=rng.randrange(0, 5000),
            outcome=rng.choice(["ok"] * 8 + ["error", "rate_limited"]),
            request_id=str(i),
            created_at=now - datetime.timedelta(seconds=i),
        )
        for i in range(997)
    ]
    ToolCall.objects.bulk_create(calls)
    since = now - datetime.timedelta(seconds=900)
    recent = [c for c in calls if c.created_at >= since]
    for by, key_of in [("tool", lambda c: c.tool), ("api_key", lambda c: c.api_key.pk if c.api_key else None)]:
        with CaptureQueriesContext(connection) as queries:
            stats = tool_call_stats(since=since, by=by)
        assert len(queries) == 1
        groups = {key_of(c) for c in recent}
        assert {row.key for row in stats} == groups
        for row in stats:
            durations = sorted(c.duration_ms for c in recent if key_of(c) == row.key)
            assert row.calls == len(durations)
            assert row.p95_ms == durations[math.ceil(0.95 * len(durations)) - 1]
            assert row.failed == len([c for c in recent if key_of(c) == row.key and c.outcome != "ok"])


DURATIONS = {
    "one value": lambda rng: 42,
    "inside one coarse bucket": lambda rng: rng.randrange(100, 110),
    "on the buckets' edges": lambda rng: rng.choice(
        [0, 9, 10, 99, 100, 109, 199, 200, 999, 1000, 9999, 10000, 99999, 100000]
    ),
    "every magnitude": lambda rng: int(10 ** rng.uniform(0, 7)),
    "short, with a slow tail": lambda rng: rng.randrange(0, 30) if rng.random() < 0.93 else rng.randrange(500, 60000),
}


@pytest.mark.django_db
@pytest.mark.parametrize("durations", DURATIONS)
@pytest.mark.parametrize("size", [1, 20, 21, 400])
def test_p95_is_the_nearest_rank_whatever_the_durations(make_api_key, durations, size):
    """The p95 is found through coarse buckets of the duration and then the values of one bucket: equal to the
    nearest rank of the sorted durations for groups of any size (20 calls: the 19th; 21: the 20th) and any spread,
    calls without a key (stdio) a group of their own."""
    rng = random.Random(f"{durations}-{size}")
    keys = [make_api_key(name=f"k{i}")[0] for i in range(2)]
    now = timezone.now()
    calls = [
        ToolCall(
            tool=rng.choice(["a", "b"]),
            api_key=rng.choice([*keys, None]),
            duration_ms=DURATIONS[durations](rng),
            outcome=rng.choice(["ok", "ok", "error"]),
            request_id=str(i),
            created_at=now - datetime.timedelta(seconds=i),
        )
        for i in range(size * 3)
    ]
    ToolCall.objects.bulk_create(calls)
    for by, key_of in [("tool", lambda c: c.tool), ("api_key", lambda c: c.api_key.pk if c.api_key else None)]:
        expected = {}
        for group in {key_of(c) for c in calls}:
            mine = [c for c in calls if key_of(c) == group]
            ranked = sorted(c.duration_ms for c in mine)
            failed = len([c for c in mine if c.outcome == "error"])
            expected[group] = (len(ranked), failed, ranked[math.ceil(0.95 * len(ranked)) - 1])
        stats = tool_call_stats(since=now - datetime.timedelta(days=1), by=by)
        assert {row.key: (row.calls, row.failed, row.p95_ms) for row in stats} == expected


@pytest.mark.django_db
def test_tool_call_stats_read_the_recent_range_from_the_covering_index():
    """The histograms read the last 24 hours from toolcall_recent_idx alone, the range told rare to SQLite's
    planner (which takes any range on an index to hold a quarter of the rows: at a million calls it then walks
    another index through every row, bench/bench_staff_pages.py; too slow a table for a test)."""
    from django.db.models import F

    from mcpsite.core.db import RareAtLeast

    now = timezone.now()
    ToolCall.objects.bulk_create(
        ToolCall(
            tool=f"t{i % 20}",
            transport="rpc",
            duration_ms=i % 97,
            outcome="ok",
            request_id=str(i),
            created_at=now - datetime.timedelta(minutes=i),
        )
        for i in range(5000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    since = now - datetime.timedelta(hours=1)

    def plan(condition) -> str:
        histogram = ToolCall.objects.filter(condition).order_by().values("tool", "duration_ms").annotate(n=Count("id"))
        sql, params = histogram.query.sql_with_params()
        explain = "EXPLAIN QUERY PLAN" if connection.vendor == "sqlite" else "EXPLAIN"
        with connection.cursor() as cursor:
            cursor.execute(f"{explain} {sql}", params)
            return str(cursor.fetchall())

    if connection.vendor != "sqlite":  # PostgreSQL estimates the range from its statistics: the plain condition
        assert "likelihood" not in str(ToolCall.objects.filter(RareAtLeast(F("created_at"), since)).query)
        return
    assert "likelihood(" in str(ToolCall.objects.filter(RareAtLeast(F("created_at"), since)).query)
    assert "COVERING INDEX toolcall_recent_idx" in plan(RareAtLeast(F("created_at"), since))


@pytest.mark.django_db
def test_today_lists_the_shows_on_now_and_next_in_start_order_and_counts_the_ended_ones():
    from cinema import selectors
    from cinema.models import ShowSeatBlock
    from cinema.tests.conftest import make_movie, make_schedule, make_theater

    today = timezone.localdate()
    small, big = make_theater("小", rows=1, columns=4), make_theater("大", rows=2, columns=10, blocked={"A1"})
    movie = make_movie()
    ended = make_schedule(movie, big, today, "09:00", "11:00")  # full, but over: not listed first any more
    running = make_schedule(movie, small, today, "12:30", "14:30")
    late = make_schedule(movie, big, today, "23:30", "01:30")  # ends after midnight
    next_one = make_schedule(movie, big, today, "15:00", "17:00")
    make_schedule(movie, big, today + datetime.timedelta(days=1), "09:00")
    for schedule, count in [(ended, 19), (running, 4), (next_one, 10)]:
        for seat in Seat.objects.filter(theater=schedule.theater, blocked=False).order_by("pk")[:count]:
            reservation = schedule.reservations.create(
                public_id=f"r{schedule.pk}{seat.pk}", password_hash="x", reserved_at=timezone.now()
            )
            ReservedSeat.objects.create(reservation=reservation, schedule=schedule, seat=seat)
    # A seat blocked for the next show alone (a per-show block) is not sellable at that show.
    ShowSeatBlock.objects.create(
        schedule=next_one, seat=Seat.objects.get(theater=big, label="B10"), blocked_at=timezone.now()
    )
    board = selectors.show_occupancy_list(date=today, limit=2, after=datetime.time(13, 0))
    assert (board.total, board.ended) == (4, 1)
    assert [(s.schedule_pk, s.booked, s.capacity, s.nearly_full) for s in board.shows] == [
        (running.pk, 4, 4, True),
        (next_one.pk, 10, 18, False),
    ]
    late_evening = selectors.show_occupancy_list(date=today, limit=10, after=datetime.time(23, 45))
    assert [s.schedule_pk for s in late_evening.shows] == [late.pk] and late_evening.ended == 3
    # Tomorrow (no `after`): every show, in start order.
    tomorrow = selectors.show_occupancy_list(date=today + datetime.timedelta(days=1), limit=10)
    assert (tomorrow.total, tomorrow.ended, len(tomorrow.shows)) == (1, 0, 1)


@pytest.mark.django_db
def test_ledger_months_of_the_fiscal_year_and_the_account_type_filter(admin_client):
    from ledger import selectors
    from ledger.seeding import chart_of_accounts_ensure
    from ledger.services import LineInput, journal_entry_create, journal_entry_reverse

    chart_of_accounts_ensure()

    def post(day, debit, credit, amount):
        return journal_entry_create(
            date=day,
            description="テスト",
            lines=[
                LineInput(account_code=debit, debit=Decimal(amount)),
                LineInput(account_code=credit, credit=Decimal(amount)),
            ],
        )

    post(datetime.date(2025, 3, 31), "100", "400", "999")  # the previous fiscal year
    sale = post(datetime.date(2025, 4, 1), "100", "400", "1000.50")
    post(datetime.date(2025, 4, 30), "650", "100", "300")
    post(datetime.date(2026, 3, 31), "100", "400", "70")
    journal_entry_reverse(entry_id=sale.pk)  # dated today: outside 2025's year unless today is in it
    months = selectors.revenue_expenses_by_month(year=2025)
    assert [m.month for m in months][0] == datetime.date(2025, 4, 1) and months[-1].month == datetime.date(2026, 3, 1)
    assert (months[0].revenue, months[0].expenses) == (Decimal("1000.50"), Decimal("300"))
    assert months[-1].revenue == Decimal("70") and all(m.revenue == 0 for m in months[1:-1])
    assert selectors.fiscal_year_of(day=datetime.date(2026, 3, 31)) == 2025
    assert selectors.fiscal_year_of(day=datetime.date(2026, 4, 1)) == 2026

    # The dashboard's link: April's revenue entries, listed once each with their full amount.
    response = admin_client.get(
        "/admin/ledger/journalentry/?account_type=revenue&date__gte=2025-04-01&date__lt=2025-05-01"
    )
    assert [e.pk for e in response.context["cl"].result_list] == [sale.pk]
    assert response.context["cl"].result_list[0].debit_total == Decimal("1000.50")
    page = admin_client.get("/admin/?fiscal_year=2025").content.decode()
    assert "2025年度" in page and "¥1,000.50" in page


@pytest.mark.django_db
def test_the_dashboard_opens_on_the_latest_fiscal_year_with_entries(admin_client):
    """The demo's books are of an earlier year than today's: the dashboard opens on them, not on twelve ¥0 months;
    a later (post-dated) year does not count, and with no entries it is today's year."""
    from ledger import selectors
    from ledger.seeding import chart_of_accounts_ensure
    from ledger.services import LineInput, journal_entry_create

    chart_of_accounts_ensure()
    today = timezone.localdate()
    current = selectors.fiscal_year_of(day=today)
    assert f"{current}年度" in admin_client.get("/admin/").content.decode()

    def post(day):
        lines = [LineInput(account_code="100", debit=Decimal(800)), LineInput(account_code="400", credit=Decimal(800))]
        journal_entry_create(date=day, description="売上", lines=lines)

    post(datetime.date(current - 2, 5, 1))
    post(datetime.date(current + 1, 6, 1))  # post-dated, next fiscal year
    page = admin_client.get("/admin/").content.decode()
    assert f"{current - 2}年度" in page and "¥800" in page
    assert selectors.default_fiscal_year(today=today) == current - 2
    assert f"{current - 1}年度" in admin_client.get(f"/admin/?fiscal_year={current - 1}").content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["abc", "-1", "99999", "9998", "２０２５", "2025.5", ""])
def test_a_bad_fiscal_year_shows_the_default_one(admin_client, value):
    from ledger.selectors import fiscal_year_of

    response = admin_client.get("/admin/", {"fiscal_year": value})
    assert response.status_code == 200
    assert f"{fiscal_year_of(day=timezone.localdate())}年度" in response.content.decode()


# --- bounded queries ----------------------------------------------------------------------------------------


def add_shows_and_calls(*, shows: int, calls: int, owner) -> None:
    """`shows` shows today and tomorrow across 10 theaters with some seats booked, and `calls` tool calls in the
    last 24 hours across 20 tools and 5 keys (bulk_create: this is about the dashboard, not the services)."""
    today = timezone.localdate()
    movie = Movie.objects.create(title="負荷", duration=90, rating=Decimal("4.0"), public_id=f"mq{shows}")
    theaters = [
        Theater.objects.create(name=f"負荷{shows}-{i}", rows=1, columns=10, public_id=f"tq{shows}-{i}")
        for i in range(10)
    ]
    Seat.objects.bulk_create(Seat(theater=t, row="A", column=c, label=f"A{c}") for t in theaters for c in range(1, 11))
    schedules = Schedule.objects.bulk_create(
        Schedule(
            movie=movie,
            theater=theaters[i % 10],
            date=today + datetime.timedelta(days=i // 10 % 2),
            start_time=datetime.time(i // 20 // 4, i // 20 % 4 * 15),  # i = 20·slot + 10·day + theater
            end_time=datetime.time((i // 20 + 1) // 4 % 24, (i // 20 + 1) % 4 * 15),  # a quarter: no overlap
            public_id=f"sq{shows}-{i}",
        )
        for i in range(shows)
    )
    seat_of = {t.pk: list(t.seats.order_by("column")) for t in theaters}
    from cinema.models import Reservation

    reservations = Reservation.objects.bulk_create(
        Reservation(schedule=s, public_id=f"rq{shows}-{i}", password_hash="x", reserved_at=timezone.now())
        for i, s in enumerate(schedules)
    )
    ReservedSeat.objects.bulk_create(
        ReservedSeat(reservation=r, schedule=r.schedule, seat=seat)
        for i, r in enumerate(reservations)
        for seat in seat_of[r.schedule.theater_id][: i % 11]
    )
    keys = [
        ApiKey.objects.create(name=f"q{i}", owner=owner, prefix=f"q{i}", digest=f"{i}".zfill(64), scopes=["cinema"])
        for i in range(5)
    ]
    now = timezone.now()
    ToolCall.objects.bulk_create(
        (
            ToolCall(
                api_key=keys[i % 5],
                transport="http",
                tool=f"tool_{i % 20}",
                duration_ms=i % 997,
                outcome="error" if i % 13 == 0 else "ok",
                request_id=str(i),
                created_at=now - datetime.timedelta(seconds=i % 80_000),
            )
            for i in range(calls)
        ),
        batch_size=5000,
    )


def test_queries_do_not_grow_with_shows_or_tool_calls(demo_world, admin_client, admin_user):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert admin_client.get("/admin/").status_code == 200
        return len(queries)

    small = count()
    with CaptureQueriesContext(connection) as built:
        dashboard_build(user=admin_user, now=timezone.now())
    add_shows_and_calls(shows=1_000, calls=100_000, owner=admin_user)
    assert ToolCall.objects.count() > 100_000 and Schedule.objects.count() > 1_000
    assert count() == small
    with CaptureQueriesContext(connection) as rebuilt:
        dashboard_build(user=admin_user, now=timezone.now())
    assert len(rebuilt) == len(built) <= 20


def extra_block(viewer):
    """A block a new app could contribute (test_an_app_contributes_a_block_through_its_appconfig)."""
    from mcpsite.dashboard import Block, Link, changelist

    if not viewer.may("geo.view_pointlookup"):
        return None
    link = Link("1", changelist("geo.pointlookup"))
    return Block("dash-extra", "Extra", "admin/dashboard/extra_block.html", link)


def test_an_app_contributes_a_block_through_its_appconfig(db, admin_client, monkeypatch, tmp_path, settings):
    """Adding an app touches no platform file: the AppConfig's `dashboard_blocks` names the builder, and its block
    appears after the blocks of the apps listed before it, before the platform's own."""
    from django.apps import apps

    (tmp_path / "admin" / "dashboard").mkdir(parents=True)
    (tmp_path / "admin" / "dashboard" / "extra_block.html").write_text('<a href="{{ data.href }}">{{ data.text }}</a>')
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [*settings.TEMPLATES[0]["DIRS"], tmp_path]}]
    monkeypatch.setattr(
        apps.get_app_config("geo"), "dashboard_blocks", ("mcpsite.tests.test_dashboard.extra_block",), raising=False
    )
    html = dashboard_html(admin_client)
    assert re.findall(r'<section id="([^"]+)"', html) == [
        "dash-shows", "dash-bookings", "dash-ledger", "dash-extra", "dash-sales", "dash-stock", "dash-reminders",
        "dash-tool-calls",
    ]  # fmt: skip
    assert '<a href="/admin/geo/pointlookup/">1</a>' in html


def test_refusals_are_shown_by_the_scope_needed_and_link_to_them(db, admin_client):
    now = timezone.now()

    def refused(tool: str, scope: str, n: int, **fields) -> None:
        for i in range(n):
            ToolCall.objects.create(
                tool=tool, transport="http", outcome="denied", scope=scope, request_id=f"{tool}{i}", **fields
            )

    refused("reserve_seats", "cinema:write", 2)
    refused("list_accounts", "ledger:read", 1)
    refused("list_accounts", "ledger:read", 1, created_at=now - datetime.timedelta(days=2))  # outside the window
    ToolCall.objects.create(tool="get_movie_list", transport="http", outcome="ok", scope="cinema", request_id="ok")
    html = dashboard_html(admin_client)
    table = re.search(r'<table class="dash-calls" id="dash-refusals-by-scope">.*?</table>', html, re.S).group(0)
    assert re.findall(r"<td>([^<]+)</td>", table) == ["cinema:write", "ledger:read"]
    links = dashboard_links(table)
    assert [rows for _href, rows in links] == [2, 1]
    for href, rows in links:
        assert admin_client.get(href).context["cl"].result_count == rows
