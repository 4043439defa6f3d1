"""The books on the staff dashboard (mcpsite/dashboard.py): revenue and expenses by month, the trial balance."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.urls import reverse
from django.utils import formats
from django.utils.translation import gettext

from mcpsite.charts import BarChart, ChartValue, hbar_chart
from mcpsite.dashboard import Block, Link, Viewer, changelist

from . import selectors, services


def yen(value: Decimal) -> str:
    return "¥" + services.yen(value)


def fiscal_year_param(value: str | None) -> int | None:
    """`?fiscal_year=2025` picks another year of the ledger block; anything else means the default year."""
    return int(value) if value and value.isascii() and value.isdigit() and 1900 <= int(value) <= 2999 else None


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
    next_year: int | None  # none past the current year


def ledger_block(viewer: Viewer) -> Block | None:
    if not viewer.may("ledger.view_journalentry"):
        return None
    today = viewer.today
    current = selectors.fiscal_year_of(day=today)
    chosen = fiscal_year_param(viewer.params.get("fiscal_year"))
    year = selectors.default_fiscal_year(today=today) if chosen is None else chosen
    months = selectors.revenue_expenses_by_month(year=year)
    # Each month's entries: from its first day to the next month's (the last ends where the next year starts).
    bounds = [m.month for m in months] + [selectors.fiscal_year_months(year=year + 1)[0]]
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
    trial = selectors.trial_balance(as_of=today)
    data = LedgerBlock(
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
        next_year=year + 1 if year < current else None,
    )
    index = reverse("admin:index")
    years = [Link(gettext("Previous year"), f"{index}?fiscal_year={year - 1}")]
    if data.next_year is not None:
        years.append(Link(gettext("Next year"), f"{index}?fiscal_year={data.next_year}"))
    heading = gettext("Books, fiscal year %(year)s") % {"year": year}
    return Block("dash-ledger", heading, "admin/dashboard/ledger_books.html", data, heading_links=tuple(years))
