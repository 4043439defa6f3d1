"""The staff dashboard on the admin index: each app's selectors answer, this module decides who sees what and
where each number links.

A block appears only for staff with the view permission of the changelists its numbers open, and every number
links to the changelist (filtered) that lists the rows behind it. Every block runs a fixed number of queries,
whatever the number of shows, bookings or tool calls (mcpsite/tests/test_dashboard.py counts them).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlencode

from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext

from cinema import selectors as cinema_selectors
from ledger import selectors as ledger_selectors
from ledger import services as ledger_services
from merchant import selectors as merchant_selectors
from reminders import selectors as reminders_selectors

from . import selectors
from .charts import BarChart, ChartValue, hbar_chart
from .models import ApiKey

SHOWS_PER_DAY = 10
ACTIVITY_DAYS = 14
LOW_STOCK_LISTED = 8
TOOL_CALL_HOURS = 24
FAILURE_DAYS = 7


def changelist(model: str, **params) -> str:
    """The admin changelist of `model` ("app_label.model_name") filtered by `params` (changelist lookups)."""
    app_label, model_name = model.split(".")
    url = reverse(f"admin:{app_label}_{model_name}_changelist")
    return f"{url}?{urlencode(params)}" if params else url


def local_midnight(day: datetime.date) -> datetime.datetime:
    return timezone.make_aware(datetime.datetime.combine(day, datetime.time.min))


def iso(moment: datetime.datetime) -> str:
    """A changelist lookup value for a moment (local time with its offset; the admin parses it back)."""
    return timezone.localtime(moment).isoformat()


def number(value: int | Decimal) -> str:
    return formats.number_format(value, decimal_pos=0, force_grouping=True)


def yen(value: Decimal) -> str:
    return "¥" + ledger_services.yen(value)


@dataclass(frozen=True, slots=True)
class Link:
    text: str
    href: str
    rows: int | None = None  # the changelist's row count when `text` is that count (tests follow every link)


# --- cinema: today's and tomorrow's shows --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShowLine:
    show: cinema_selectors.ShowOccupancy
    seat_map: str  # the show's change page (its seat map)
    booked: Link  # its confirmed reservations


@dataclass(frozen=True, slots=True)
class DayBlock:
    date: datetime.date
    heading: str
    all_shows: Link
    shows: list[ShowLine]


def shows_block(*, today: datetime.date) -> list[DayBlock]:
    days = []
    for day, heading in [(today, gettext("Today")), (today + datetime.timedelta(days=1), gettext("Tomorrow"))]:
        board = cinema_selectors.show_occupancy_list(date=day, limit=SHOWS_PER_DAY)
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
        days.append(DayBlock(day, heading, all_shows, lines))
    return days


# --- bookings and sales, last 14 days ------------------------------------------------------------------------


def activity_chart(*, today: datetime.date, bookings: bool, sales: bool) -> BarChart:
    """Reservations made and units sold per day, oldest day first (a series only with its permission)."""
    days = [today - datetime.timedelta(days=n) for n in range(ACTIVITY_DAYS - 1, -1, -1)]
    since, until = local_midnight(days[0]), local_midnight(today + datetime.timedelta(days=1))
    series, counts = [], []
    if bookings:
        series.append(gettext("Bookings"))
        counts.append(
            (
                "cinema.reservation",
                "reserved_at",
                {},
                cinema_selectors.reservation_counts_by_day(since=since, until=until),
            )
        )
    if sales:
        series.append(gettext("Units sold"))
        counts.append(
            (
                "merchant.inventorymovement",
                "created_at",
                {"reason__exact": "sale"},
                merchant_selectors.sales_units_by_day(since=since, until=until),
            )
        )
    rows = []
    for day in days:
        start, end = local_midnight(day), local_midnight(day + datetime.timedelta(days=1))
        values = []
        for model, field, params, by_day in counts:
            value = by_day.get(day, 0)
            href = changelist(model, **params, **{f"{field}__gte": iso(start), f"{field}__lt": iso(end)})
            values.append(ChartValue(value, number(value), href, value if model == "cinema.reservation" else None))
        rows.append((formats.date_format(day, "MONTH_DAY_FORMAT"), values))
    title = gettext("Bookings and sales, last %(days)d days") % {"days": ACTIVITY_DAYS}
    return hbar_chart(chart_id="activity", title=title, series=series, rows=rows)


# --- the ledger ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LedgerBlock:
    fiscal_year: int
    chart: BarChart
    revenue: Link
    expenses: Link
    balanced: bool
    trial_balance: str  # the trial balance report
    debit_total: str
    credit_total: str
    previous_year: int
    next_year: int | None  # none past the current year


def ledger_block(*, today: datetime.date, fiscal_year: int | None) -> LedgerBlock:
    current = ledger_selectors.fiscal_year_of(day=today)
    year = current if fiscal_year is None else fiscal_year
    months = ledger_selectors.revenue_expenses_by_month(year=year)
    # Each month's entries: from its first day to the next month's (the last ends where the next year starts).
    bounds = [m.month for m in months] + [ledger_selectors.fiscal_year_months(year=year + 1)[0]]
    rows = []
    for result, end in zip(months, bounds[1:], strict=True):
        period = {"date__gte": result.month.isoformat(), "date__lt": end.isoformat()}
        revenue = changelist("ledger.journalentry", account_type="revenue", **period)
        expenses = changelist("ledger.journalentry", account_type="expense", **period)
        rows.append(
            (
                formats.date_format(result.month, "YEAR_MONTH_FORMAT"),
                [
                    ChartValue(result.revenue, yen(result.revenue), revenue),
                    ChartValue(result.expenses, yen(result.expenses), expenses),
                ],
            )
        )
    title = gettext("Revenue and expenses by month, fiscal year %(year)d") % {"year": year}
    chart = hbar_chart(chart_id="ledger", title=title, series=[gettext("Revenue"), gettext("Expenses")], rows=rows)
    year_period = {"date__gte": bounds[0].isoformat(), "date__lt": bounds[-1].isoformat()}
    trial = ledger_selectors.trial_balance(as_of=today)
    return LedgerBlock(
        fiscal_year=year,
        chart=chart,
        revenue=Link(
            yen(sum((m.revenue for m in months), Decimal(0))),
            changelist("ledger.journalentry", account_type="revenue", **year_period),
        ),
        expenses=Link(
            yen(sum((m.expenses for m in months), Decimal(0))),
            changelist("ledger.journalentry", account_type="expense", **year_period),
        ),
        balanced=trial.balanced,
        trial_balance=reverse("admin:ledger_trial_balance"),
        debit_total=yen(trial.debit_total),
        credit_total=yen(trial.credit_total),
        previous_year=year - 1,
        next_year=year + 1 if year < current else None,
    )


# --- merchant: low stock -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StockBlock:
    out_of_stock: Link
    low: Link
    low_label: str
    products: list[tuple[object, str]]  # (product, its change page)


def stock_block() -> StockBlock:
    stock = merchant_selectors.product_low_stock(limit=LOW_STOCK_LISTED)
    return StockBlock(
        out_of_stock=Link(
            number(stock.out_of_stock), changelist("merchant.product", stock="out", active__exact=1), stock.out_of_stock
        ),
        low=Link(number(stock.low), changelist("merchant.product", stock="low", active__exact=1), stock.low),
        products=[(p, reverse("admin:merchant_product_change", args=[p.pk])) for p in stock.products],
        low_label=gettext("Low (1–%(low)d)") % {"low": merchant_selectors.LOW_STOCK},
    )


# --- reminders -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RemindersBlock:
    due_today: Link | None
    failed_messages: Link | None
    failed_deliveries: Link | None
    failure_days: int = FAILURE_DAYS


def reminders_block(*, now: datetime.datetime, user) -> RemindersBlock:
    today = timezone.localdate(now)
    start, end = local_midnight(today), local_midnight(today + datetime.timedelta(days=1))
    since = local_midnight(today - datetime.timedelta(days=FAILURE_DAYS - 1))
    health = reminders_selectors.delivery_health(start=start, end=end, failed_since=since)
    due = Link(
        number(health.due),
        changelist("reminders.reminder", is_active__exact=1, next_fire_at__gte=iso(start), next_fire_at__lt=iso(end)),
        health.due,
    )
    messages = Link(
        number(health.failed_messages),
        changelist("reminders.message", status__exact="failed", created_at__gte=iso(since)),
        health.failed_messages,
    )
    deliveries = Link(
        number(health.failed_deliveries),
        changelist("reminders.reminderdelivery", status__exact="failed", delivered_at__gte=iso(since)),
        health.failed_deliveries,
    )
    return RemindersBlock(
        due_today=due if user.has_perm("reminders.view_reminder") else None,
        failed_messages=messages if user.has_perm("reminders.view_message") else None,
        failed_deliveries=deliveries if user.has_perm("reminders.view_reminderdelivery") else None,
    )


# --- MCP tool calls, last 24 hours ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCallLine:
    name: str  # the tool, or the API key's name
    calls: Link
    failed: Link
    failed_percent: float
    p95: Link  # the calls at or above the p95 duration


@dataclass(frozen=True, slots=True)
class ToolCallsBlock:
    hours: int
    by_tool: list[ToolCallLine]
    by_key: list[ToolCallLine]

    @property
    def tables(self) -> list[tuple[str, list[ToolCallLine]]]:
        return [(gettext("By tool"), self.by_tool), (gettext("By API key"), self.by_key)]


def _tool_call_line(name: str, row: selectors.ToolCallStats, **lookup) -> ToolCallLine:
    failed = ",".join(selectors.FAILED_OUTCOMES)
    return ToolCallLine(
        name=name,
        calls=Link(number(row.calls), changelist("mcpsite.toolcall", **lookup), row.calls),
        failed=Link(number(row.failed), changelist("mcpsite.toolcall", **lookup, outcome__in=failed), row.failed),
        failed_percent=row.failed_percent,
        p95=Link(f"{number(row.p95_ms)} ms", changelist("mcpsite.toolcall", **lookup, duration_ms__gte=row.p95_ms)),
    )


def tool_calls_block(*, now: datetime.datetime) -> ToolCallsBlock:
    # Whole seconds, so the links' lookups name exactly the moment the counts were taken from.
    since = (now - datetime.timedelta(hours=TOOL_CALL_HOURS)).replace(microsecond=0)
    window = {"created_at__gte": iso(since)}
    by_tool = [
        _tool_call_line(row.key, row, tool__exact=row.key, **window)
        for row in selectors.tool_call_stats(since=since, by="tool")
    ]
    keyed = selectors.tool_call_stats(since=since, by="api_key")
    names = dict(ApiKey.objects.filter(pk__in=[r.key for r in keyed if r.key is not None]).values_list("pk", "name"))
    by_key = [
        _tool_call_line(names.get(row.key, "—"), row, api_key__id__exact=row.key, **window)
        if row.key is not None
        else _tool_call_line(gettext("no key (stdio)"), row, api_key__isnull="1", **window)
        for row in keyed
    ]
    return ToolCallsBlock(TOOL_CALL_HOURS, by_tool, by_key)


# --- the whole page ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Dashboard:
    shows: list[DayBlock] | None
    activity: BarChart | None
    ledger: LedgerBlock | None
    stock: StockBlock | None
    reminders: RemindersBlock | None
    tool_calls: ToolCallsBlock | None

    @property
    def empty(self) -> bool:
        return not any([self.shows, self.activity, self.ledger, self.stock, self.reminders, self.tool_calls])


def dashboard_build(*, user, now: datetime.datetime, fiscal_year: int | None = None) -> Dashboard:
    """The blocks `user` may see, as of `now`."""
    today = timezone.localdate(now)
    may = user.has_perm
    bookings, sales = may("cinema.view_reservation"), may("merchant.view_inventorymovement")
    sees_reminders = any(may(f"reminders.view_{m}") for m in ("reminder", "message", "reminderdelivery"))
    return Dashboard(
        shows=shows_block(today=today) if may("cinema.view_schedule") and bookings else None,
        activity=activity_chart(today=today, bookings=bookings, sales=sales) if bookings or sales else None,
        ledger=ledger_block(today=today, fiscal_year=fiscal_year) if may("ledger.view_journalentry") else None,
        stock=stock_block() if may("merchant.view_product") else None,
        reminders=reminders_block(now=now, user=user) if sees_reminders else None,
        tool_calls=tool_calls_block(now=now) if may("mcpsite.view_toolcall") else None,
    )
