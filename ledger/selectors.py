"""Ledger reads. Every report is one SQL GROUP BY over each account's day totals (`AccountDayTotal`, kept by
database triggers on the lines: at most accounts × days rows, however many lines a day has).

Each report costs a constant two queries (the chart of accounts and one aggregate), whatever the
number of lines; Python only walks the per-account totals.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import BigIntegerField, Count, DecimalField, F, Q, QuerySet, Sum, Value
from django.db.models.functions import Cast, Coalesce, Round
from django.utils.translation import gettext

from mcpsite.core.db import sums_decimals_exactly
from mcpsite.core.errors import NotFound
from mcpsite.core.search import SearchHit, SearchQuery
from mcpsite.formats import day

from .models import DEBIT_NORMAL, Account, AccountDayTotal, AccountType, JournalEntry, JournalLine

ZERO = Decimal(0)
_AMOUNT = DecimalField(max_digits=20, decimal_places=2)


def _sum(field: str) -> Coalesce:
    """SUM of an amount column, exact on every backend.

    SQLite keeps decimals as REAL, and a million float additions drift by cents; there we add
    whole cents as integers (exact up to 2**63 cents). PostgreSQL sums `numeric` exactly.
    """
    if not sums_decimals_exactly(connection):
        return Coalesce(Sum(Cast(Round(F(field) * 100), BigIntegerField())), Value(0))
    return Coalesce(Sum(field), Value(ZERO), output_field=_AMOUNT)


@dataclass(frozen=True, slots=True)
class AccountTotal:
    account: Account
    debit: Decimal
    credit: Decimal

    @property
    def balance(self) -> Decimal:
        """The balance on the account's normal side (debit for assets and expenses, else credit)."""
        if self.account.type in DEBIT_NORMAL:
            return self.debit - self.credit
        return self.credit - self.debit


@dataclass(slots=True)
class Section:
    total: Decimal = ZERO
    accounts: list[AccountTotal] = field(default_factory=list)

    def add(self, row: AccountTotal) -> None:
        self.total += row.balance
        if row.balance:
            self.accounts.append(row)


@dataclass(frozen=True, slots=True)
class BalanceSheet:
    as_of: datetime.date
    assets: Section
    liabilities: Section
    equity: Section  # includes retained earnings
    retained_earnings: Decimal

    @property
    def liabilities_and_equity(self) -> Decimal:
        return self.liabilities.total + self.equity.total

    @property
    def verified(self) -> bool:
        return self.assets.total == self.liabilities_and_equity


@dataclass(frozen=True, slots=True)
class IncomeStatement:
    start: datetime.date
    end: datetime.date
    revenue: Section
    expenses: Section

    @property
    def net_income(self) -> Decimal:
        return self.revenue.total - self.expenses.total


@dataclass(frozen=True, slots=True)
class TrialBalance:
    as_of: datetime.date
    rows: list[AccountTotal]
    debit_total: Decimal
    credit_total: Decimal

    @property
    def balanced(self) -> bool:
        return self.debit_total == self.credit_total


def account_list(*, type: str | None = None, category: str | None = None) -> QuerySet[Account]:
    """The chart of accounts in code order; `category` matches partially (case-insensitive)."""
    accounts = Account.objects.order_by("code")
    if type:
        accounts = accounts.filter(type=type)
    if category:
        accounts = accounts.filter(category__icontains=category)
    return accounts


def account_codes_matching(*, query: str, limit: int) -> list[str]:
    """Codes of active accounts whose code starts with `query` or whose name contains it, in code order."""
    query = query.strip()
    accounts = Account.objects.filter(is_active=True).order_by("code")
    if query:
        accounts = accounts.filter(Q(code__startswith=query) | Q(name__icontains=query))
    return list(accounts.values_list("code", flat=True)[:limit])


def account_get(*, code: str) -> Account:
    try:
        return Account.objects.get(code=code)
    except Account.DoesNotExist:
        raise NotFound(
            f"Unknown account code: {code}",
            data={"unknownAccountCodes": [code], "message": "Use list_accounts to see the chart of accounts"},
        ) from None


def _day_totals(*, start: datetime.date | None = None, end: datetime.date | None = None) -> QuerySet[AccountDayTotal]:
    """The day totals of days in [start, end] (either end open)."""
    days = AccountDayTotal.objects.order_by()
    if start is not None:
        days = days.filter(date__gte=start)
    if end is not None:
        days = days.filter(date__lte=end)
    return days


def _cents(value: Decimal | int | None) -> Decimal:
    """A sum of whole cents as money."""
    return Decimal(value or 0).scaleb(-2)


def account_totals(*, start: datetime.date | None = None, end: datetime.date | None = None) -> list[AccountTotal]:
    """Debit and credit totals per account for entries dated in [start, end] (either end open).

    Two queries: the accounts, and one GROUP BY account over their day totals.
    """
    sums = {
        row["account_id"]: (_cents(row["debit"]), _cents(row["credit"]))
        for row in _day_totals(start=start, end=end)
        .values("account_id")
        .annotate(debit=Sum("debit_cents"), credit=Sum("credit_cents"))
    }
    return [AccountTotal(account, *sums.get(account.pk, (ZERO, ZERO))) for account in Account.objects.order_by("code")]


def account_balance(*, account: Account, as_of: datetime.date) -> Decimal:
    """The account's balance on its normal side, over entries dated up to and including `as_of`."""
    totals = (
        _day_totals(end=as_of).filter(account=account).aggregate(debit=Sum("debit_cents"), credit=Sum("credit_cents"))
    )
    return AccountTotal(account, _cents(totals["debit"]), _cents(totals["credit"])).balance


def balance_sheet(*, as_of: datetime.date) -> BalanceSheet:
    """Assets, liabilities and equity at `as_of`; equity includes retained earnings (revenue − expenses to date)."""
    sections = {t: Section() for t in AccountType.values}
    for row in account_totals(end=as_of):
        sections[row.account.type].add(row)
    retained = sections[AccountType.REVENUE].total - sections[AccountType.EXPENSE].total
    equity = sections[AccountType.EQUITY]
    equity.total += retained
    return BalanceSheet(
        as_of=as_of,
        assets=sections[AccountType.ASSET],
        liabilities=sections[AccountType.LIABILITY],
        equity=equity,
        retained_earnings=retained,
    )


def income_statement(*, start: datetime.date, end: datetime.date) -> IncomeStatement:
    """Revenue, expenses and net income for entries dated from `start` to `end` inclusive."""
    revenue, expenses = Section(), Section()
    for row in account_totals(start=start, end=end):
        if row.account.type == AccountType.REVENUE:
            revenue.add(row)
        elif row.account.type == AccountType.EXPENSE:
            expenses.add(row)
    return IncomeStatement(start=start, end=end, revenue=revenue, expenses=expenses)


def trial_balance(*, as_of: datetime.date) -> TrialBalance:
    """Debit and credit totals of every account with activity up to `as_of`; the columns must agree."""
    rows = [row for row in account_totals(end=as_of) if row.debit or row.credit]
    return TrialBalance(
        as_of=as_of,
        rows=rows,
        debit_total=sum((r.debit for r in rows), ZERO),
        credit_total=sum((r.credit for r in rows), ZERO),
    )


def journal_entry_get(*, entry_id: uuid.UUID | str) -> JournalEntry:
    return JournalEntry.objects.prefetch_related("lines__account").get(pk=entry_id)


def unbalanced_entry_ids() -> list:
    """Entries whose lines do not balance or number fewer than two (always empty unless bypassed)."""
    return list(
        JournalEntry.objects.annotate(
            n=Count("lines"),
            debit=_sum("lines__debit"),
            credit=_sum("lines__credit"),
        )
        .filter(Q(n__lt=2) | ~Q(debit=F("credit")))
        .values_list("id", flat=True)
    )


# --- the staff dashboard ----------------------------------------------------------------------

FISCAL_YEAR_START_MONTH = 4  # April to March, as most Japanese small businesses keep their books


def fiscal_year_of(*, day: datetime.date) -> int:
    """The fiscal year `day` falls in, named by the calendar year it starts in (2025 = 2025-04-01 – 2026-03-31)."""
    return day.year if day.month >= FISCAL_YEAR_START_MONTH else day.year - 1


def fiscal_year_months(*, year: int) -> list[datetime.date]:
    """The first day of each of the fiscal year's twelve months."""
    return [
        datetime.date(year + (FISCAL_YEAR_START_MONTH + i - 1) // 12, (FISCAL_YEAR_START_MONTH + i - 1) % 12 + 1, 1)
        for i in range(12)
    ]


def fiscal_year_bounds(*, year: int) -> tuple[datetime.date, datetime.date]:
    """The first and the last day of fiscal `year`."""
    start = datetime.date(year, FISCAL_YEAR_START_MONTH, 1)
    return start, datetime.date(year + 1, FISCAL_YEAR_START_MONTH, 1) - datetime.timedelta(days=1)


def default_fiscal_year(*, today: datetime.date) -> int:
    """The fiscal year staff see first: the latest one up to today's that has entries (a new year's empty books
    would show twelve ¥0 months), today's when there are none. One indexed MAX query."""
    current = fiscal_year_of(day=today)
    latest = (
        JournalEntry.objects.filter(date__lt=fiscal_year_bounds(year=current)[1] + datetime.timedelta(days=1))
        .order_by("-date")
        .values_list("date", flat=True)
        .first()
    )
    return current if latest is None else fiscal_year_of(day=latest)


@dataclass(frozen=True, slots=True)
class MonthResult:
    month: datetime.date  # the first day of the month
    revenue: Decimal
    expenses: Decimal


def revenue_expenses_by_month(*, year: int) -> list[MonthResult]:
    """Revenue and expenses of each month of fiscal `year` (on their normal sides, so a reversal nets out):
    one GROUP BY day and account type over the accounts' day totals (at most 366 × 2 rows), added up into months
    here. The database's month of each row (TruncMonth) is a Python function per day total on SQLite."""
    months = fiscal_year_months(year=year)
    rows = (
        _day_totals(start=months[0], end=fiscal_year_bounds(year=year)[1])
        .filter(account__type__in=[AccountType.REVENUE, AccountType.EXPENSE])
        .values("date", "account__type")
        .annotate(debit=Sum("debit_cents"), credit=Sum("credit_cents"))
    )
    cents: dict[tuple[datetime.date, str], list[int]] = {}
    for row in rows:
        sides = cents.setdefault((row["date"].replace(day=1), row["account__type"]), [0, 0])
        sides[0] += int(row["debit"] or 0)
        sides[1] += int(row["credit"] or 0)
    totals: dict[tuple[datetime.date, str], Decimal] = {}
    for (month, type_), (debit, credit) in cents.items():
        totals[month, type_] = _cents(credit - debit) if type_ == AccountType.REVENUE else _cents(debit - credit)
    return [
        MonthResult(
            month, totals.get((month, AccountType.REVENUE), ZERO), totals.get((month, AccountType.EXPENSE), ZERO)
        )
        for month in months
    ]


# --- exports ---------------------------------------------------------------------------------------------------

EXPORT_CHUNK_ROWS = 2000


def journal_lines_export(*, entries: QuerySet[JournalEntry]) -> tuple[list[Any], Iterator[tuple[Any, ...]]]:
    """(header, rows): one row per line of `entries` (an entry's lines together, entries by date), read from a
    database iterator in chunks, so any number of lines streams in constant memory."""
    fields = JournalLine._meta
    header = [
        JournalEntry._meta.get_field("date").verbose_name,
        gettext("entry ID"),
        JournalEntry._meta.get_field("description").verbose_name,
        gettext("account code"),
        fields.get_field("account").verbose_name,
        fields.get_field("debit").verbose_name,
        fields.get_field("credit").verbose_name,
    ]
    rows = (
        JournalLine.objects.filter(entry__in=entries.order_by().values("pk"))
        .order_by("entry__date", "entry_id", "line_no")
        .values_list(
            "entry__date", "entry_id", "entry__description", "account__code", "account__name", "debit", "credit"
        )
        .iterator(chunk_size=EXPORT_CHUNK_ROWS)
    )
    return header, rows


# --- the staff's search (mcpsite/staff_search.py) ----------------------------------------------------------------


def journal_entry_staff_search(*, query: SearchQuery, limit: int) -> list[SearchHit]:
    """The entry whose ID is the query, or entries whose description holds every folded term; latest first."""
    try:
        match = Q(pk=uuid.UUID(query.text))
    except ValueError:
        match = query.key_holds("search_key")
    rows = JournalEntry.objects.filter(match).order_by("-created_at", "-id").only("id", "date", "description")
    return [SearchHit(e.pk, e.description, f"{day(e.date)} {e.pk}") for e in rows[:limit]]
