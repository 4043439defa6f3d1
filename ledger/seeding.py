"""Demo and benchmark data: a Japanese small-business chart of accounts, a sample fiscal year, and
bulk entries for scale tests.

Everything is idempotent: accounts are matched by code, and generated entries and lines have
deterministic UUIDs (uuid5 of their sequence number), so a second run adds only what is missing.
Bulk entries are balanced by construction and bypass the per-entry service for speed; the caller
verifies the result with one GROUP BY (`selectors.unbalanced_entry_ids`), and on PostgreSQL the
deferred triggers check every entry at each batch's COMMIT anyway.
"""

from __future__ import annotations

import datetime
import random
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal

from django.db import connection
from django.utils import timezone

from . import sql
from .models import Account, AccountType, JournalEntry

NAMESPACE = uuid.UUID("6f1c1e64-4b0e-4d1a-9a5e-2f0b6c8f4a10")
A, L, E, R, X = AccountType.ASSET, AccountType.LIABILITY, AccountType.EQUITY, AccountType.REVENUE, AccountType.EXPENSE

CHART: list[tuple[str, str, str, str]] = [
    ("100", "現金", A, "流動資産"),
    ("101", "預金", A, "流動資産"),
    ("110", "売掛金", A, "流動資産"),
    ("120", "商品", A, "流動資産"),
    ("150", "備品", A, "固定資産"),
    ("200", "買掛金", L, "流動負債"),
    ("210", "未払金", L, "流動負債"),
    ("220", "預り金", L, "流動負債"),
    ("250", "借入金", L, "固定負債"),
    ("300", "資本金", E, "株主資本"),
    ("310", "繰越利益剰余金", E, "株主資本"),
    ("400", "売上", R, "営業収益"),
    ("410", "受取利息", R, "営業外収益"),
    ("500", "仕入", X, "売上原価"),
    ("600", "給料", X, "販売費及び一般管理費"),
    ("610", "地代家賃", X, "販売費及び一般管理費"),
    ("620", "水道光熱費", X, "販売費及び一般管理費"),
    ("630", "通信費", X, "販売費及び一般管理費"),
    ("640", "旅費交通費", X, "販売費及び一般管理費"),
    ("650", "消耗品費", X, "販売費及び一般管理費"),
    ("660", "広告宣伝費", X, "販売費及び一般管理費"),
    ("680", "支払利息", X, "営業外費用"),
]

# The sample fiscal year (April to March, as most Japanese small businesses keep it).
YEAR_START = datetime.date(2025, 4, 1)
YEAR_DAYS = 365

# (debit account, credit account, description, low, high) for bulk entries.
BULK_PATTERNS = [
    ("100", "400", "現金売上", 1_000, 50_000),
    ("110", "400", "掛売上", 10_000, 300_000),
    ("101", "110", "売掛金回収", 10_000, 290_000),
    ("500", "200", "商品仕入", 5_000, 200_000),
    ("200", "101", "買掛金支払", 5_000, 160_000),
    ("650", "100", "消耗品購入", 500, 20_000),
    ("640", "100", "交通費精算", 300, 15_000),
    ("630", "101", "通信費支払", 3_000, 30_000),
    ("620", "101", "水道光熱費支払", 5_000, 40_000),
    ("660", "101", "広告宣伝費支払", 10_000, 50_000),
]


def chart_of_accounts_ensure() -> int:
    """Create or refresh the chart of accounts; returns how many accounts were created."""
    created = 0
    for code, name, type_, category in CHART:
        _account, was_created = Account.objects.update_or_create(
            code=code, defaults={"name": name, "type": type_, "category": category}
        )
        created += was_created
    return created


# Deterministic ids without hashing each one (uuid5 costs ~8 µs, a lot at 1.5M rows): a random
# base per kind plus a sequence number, so ids never collide and bulk inserts append to the
# primary-key index in order instead of scattering across it.
_BASES = {kind: uuid.uuid5(NAMESPACE, kind).int for kind in ("sample", "scale")}
_LINE_BASES = {kind: uuid.uuid5(NAMESPACE, kind + "-line").int for kind in ("sample", "scale")}


def _entry_id(kind: str, i: int) -> uuid.UUID:
    return uuid.UUID(int=(_BASES[kind] + i) % 2**128)


def _line_id(kind: str, i: int, n: int) -> uuid.UUID:
    return uuid.UUID(int=(_LINE_BASES[kind] + i * 16 + n) % 2**128)


def _sample_year() -> Iterator[tuple[datetime.date, str, list[tuple[str, Decimal, Decimal]]]]:
    """The sample year's entries as (date, description, [(code, debit, credit)])."""

    def pair(debit: str, credit: str, amount: int):
        return [(debit, Decimal(amount), Decimal(0)), (credit, Decimal(0), Decimal(amount))]

    yield YEAR_START, "開業資金の元入れ", pair("101", "300", 3_000_000)
    yield YEAR_START, "預金引出（手元現金）", pair("100", "101", 200_000)
    yield YEAR_START, "備品購入", pair("150", "101", 400_000)
    yield YEAR_START, "銀行借入", pair("101", "250", 1_000_000)
    receivable = 0
    payable = 0
    for month in range(12):
        rng = random.Random(month)
        first = datetime.date(YEAR_START.year + (YEAR_START.month - 1 + month) // 12, (3 + month) % 12 + 1, 1)

        def day(d: int, first: datetime.date = first) -> datetime.date:
            return first.replace(day=d)

        purchase = rng.randrange(200, 400) * 1_000
        credit_sales = rng.randrange(400, 700) * 1_000
        cash_sales = rng.randrange(50, 150) * 1_000
        yield day(3), "商品仕入（掛）", pair("500", "200", purchase)
        yield day(10), "掛売上", pair("110", "400", credit_sales)
        yield day(15), "店頭現金売上", pair("100", "400", cash_sales)
        if receivable:
            yield day(20), "売掛金回収", pair("101", "110", receivable)
        if payable:
            yield day(20), "買掛金支払", pair("200", "101", payable)
        receivable, payable = credit_sales, purchase
        yield (
            day(25),
            "給料支払（源泉所得税預り）",
            [
                ("600", Decimal(250_000), Decimal(0)),
                ("220", Decimal(0), Decimal(20_000)),
                ("101", Decimal(0), Decimal(230_000)),
            ],
        )
        yield day(27), "地代家賃支払", pair("610", "101", 80_000)
        yield day(27), "水道光熱費支払", pair("620", "101", rng.randrange(10, 25) * 1_000)
        yield day(27), "通信費支払", pair("630", "101", rng.randrange(5, 12) * 1_000)
        yield day(28), "消耗品購入", pair("650", "100", rng.randrange(3, 20) * 1_000)
        yield day(28), "借入金利息支払", pair("680", "101", 2_500)
        if month % 3 == 2:
            yield day(28), "源泉所得税納付", pair("220", "101", 60_000)


def _write(rows, accounts: dict[str, Account], kind: str, start: int) -> int:
    """Insert the entries whose deterministic ids are missing; returns how many were inserted.

    Rows of values adapted by the backend's own `ops`, inserted by `sql.journal_rows_insert`: building model
    instances for a million lines would take most of the time.
    """
    ids = [_entry_id(kind, start + i) for i in range(len(rows))]
    existing = set(JournalEntry.objects.filter(id__in=ids).values_list("id", flat=True))
    ops = connection.ops
    uid = (lambda u: u) if connection.features.has_native_uuid_field else (lambda u: u.hex)
    now = ops.adapt_datetimefield_value(timezone.now())
    entries, lines = [], []
    for i, (entry_id, (date, description, parts)) in enumerate(zip(ids, rows, strict=True), start=start):
        if entry_id in existing:
            continue
        entries.append((uid(entry_id), ops.adapt_datefield_value(date), description, now))
        for n, (code, debit, credit) in enumerate(parts, start=1):
            lines.append((uid(_line_id(kind, i, n)), uid(entry_id), n, accounts[code].pk, debit, credit))
    if entries:
        sql.journal_rows_insert(entries, lines)
    return len(entries)


def sample_year_ensure() -> int:
    """Post the sample fiscal year (about 160 entries); returns how many entries were added."""
    accounts = {a.code: a for a in Account.objects.all()}
    return _write(list(_sample_year()), accounts, "sample", 0)


def _bulk_rows(start: int, stop: int):
    for i in range(start, stop):
        # A cheap deterministic mix of i (random.Random(i) per entry costs more than the insert).
        x = (i * 6364136223846793005 + 1442695040888963407) % 2**64
        debit, credit, description, low, high = BULK_PATTERNS[i % len(BULK_PATTERNS)]
        amount = Decimal(low + x % (high - low)) + Decimal((x >> 24) % 100) / 100
        date = YEAR_START + datetime.timedelta(days=(x >> 40) % YEAR_DAYS)
        yield date, f"{description} #{i}", [(debit, amount, Decimal(0)), (credit, Decimal(0), amount)]


def scale_entries_ensure(count: int, *, batch: int = 5_000, progress: Callable[[int], None] | None = None) -> int:
    """Make sure `count` generated two-line entries exist (so `count` = 500,000 gives 1,000,000 lines)."""
    accounts = {a.code: a for a in Account.objects.all()}
    added = 0
    for start in range(0, count, batch):
        stop = min(start + batch, count)
        added += _write(list(_bulk_rows(start, stop)), accounts, "scale", start)
        if progress:
            progress(stop - start)
    return added
