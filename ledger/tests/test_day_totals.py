"""Each account's day totals (`AccountDayTotal`, which the reports read) always equal the SUM over its lines,
however the lines were written: the posting service, a reversal, the bulk seeder's SQL, a plain ORM insert or raw
SQL. Database triggers keep them (migration 0004), on SQLite and on PostgreSQL."""

import datetime
import uuid
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.db.models import Sum

from ledger import seeding, selectors, services
from ledger.models import Account, AccountDayTotal, JournalEntry, JournalLine

pytestmark = pytest.mark.django_db(transaction=True)


def totals_from_lines() -> dict[tuple[int, datetime.date], tuple[Decimal, Decimal]]:
    """(account, date) -> (debit, credit) summed over the lines in Python, the definition the triggers keep."""
    totals: dict[tuple[int, datetime.date], tuple[Decimal, Decimal]] = {}
    for account_id, date, debit, credit in JournalLine.objects.values_list(
        "account_id", "entry__date", "debit", "credit"
    ):
        d, c = totals.get((account_id, date), (Decimal(0), Decimal(0)))
        totals[account_id, date] = (d + debit, c + credit)
    return totals


def stored_totals() -> dict[tuple[int, datetime.date], tuple[Decimal, Decimal]]:
    return {
        (row.account_id, row.date): (row.debit_cents.scaleb(-2), row.credit_cents.scaleb(-2))
        for row in AccountDayTotal.objects.all()
        if row.debit_cents or row.credit_cents
    }


def test_day_totals_follow_every_way_of_writing_lines(post):
    first = post("2024-04-01", ("100", "1234.56"), ("400", "-1234.56"))
    post("2024-04-01", ("100", "0.01"), ("410", "-0.01"))  # the same account and day: added up
    post("2024-05-02", ("500", 99), ("200", -99))
    services.journal_entry_reverse(entry_id=first.pk, date=datetime.date(2024, 4, 3))
    seeding.scale_entries_ensure(40, batch=15)  # the bulk seeder's raw inserts (ledger/sql.py)
    cash, sales = Account.objects.get(code="100"), Account.objects.get(code="400")
    with transaction.atomic():  # the ORM around the service (balanced, so PostgreSQL's triggers accept it)
        entry = JournalEntry.objects.create(date=datetime.date(2024, 6, 1), description="ORM")
        JournalLine.objects.create(entry=entry, line_no=1, account=cash, debit=Decimal("10.10"))
        JournalLine.objects.create(entry=entry, line_no=2, account=sales, credit=Decimal("10.10"))
    with transaction.atomic(), connection.cursor() as cursor:  # raw SQL
        entry_id = uuid.uuid4()
        uid = entry_id if connection.features.has_native_uuid_field else entry_id.hex
        cursor.execute(
            "INSERT INTO ledger_journalentry (id, date, description, created_at) VALUES (%s, %s, 'raw', %s)",
            [uid, "2024-06-01", connection.ops.adapt_datetimefield_value(datetime.datetime.now(datetime.UTC))],
        )
        for n, (account, debit, credit) in enumerate([(cash, "0", "7.77"), (sales, "7.77", "0")], start=1):
            line = uuid.uuid4()
            cursor.execute(
                "INSERT INTO ledger_journalline (id, entry_id, line_no, account_id, debit, credit) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                [line if connection.features.has_native_uuid_field else line.hex, uid, n, account.pk, debit, credit],
            )

    assert stored_totals() == totals_from_lines()
    assert stored_totals()[cash.pk, datetime.date(2024, 4, 1)] == (Decimal("1234.57"), Decimal(0))
    assert stored_totals()[cash.pk, datetime.date(2024, 6, 1)] == (Decimal("10.10"), Decimal("7.77"))


def test_reports_read_the_day_totals_and_agree_with_the_lines(post):
    """The balance sheet, the trial balance and the income statement equal the same sums taken over the lines,
    including the cents that a float sum would drift on."""
    for day in range(1, 29):
        post(f"2025-04-{day:02d}", ("100", "1000.10"), ("400", "-1000.10"))
        post(f"2025-04-{day:02d}", ("650", "0.07"), ("100", "-0.07"))
    as_of = datetime.date(2025, 4, 15)

    def line_sum(code: str, side: str, **dates) -> Decimal:
        lines = JournalLine.objects.filter(account__code=code, **dates)
        return lines.aggregate(total=Sum(side))["total"] or Decimal(0)

    sheet = selectors.balance_sheet(as_of=as_of)
    cash = line_sum("100", "debit", entry__date__lte=as_of) - line_sum("100", "credit", entry__date__lte=as_of)
    assert sheet.assets.total == cash == Decimal("15000.45")
    assert sheet.verified
    trial = selectors.trial_balance(as_of=as_of)
    assert trial.balanced and trial.debit_total == Decimal("15002.55")
    statement = selectors.income_statement(start=datetime.date(2025, 4, 10), end=datetime.date(2025, 4, 20))
    assert statement.revenue.total == Decimal("11001.10")
    assert statement.expenses.total == Decimal("0.77")
    assert selectors.account_balance(account=Account.objects.get(code="400"), as_of=as_of) == Decimal("15001.50")


@pytest.mark.skipif("connection.vendor == 'postgresql'", reason="PostgreSQL refuses to change or delete a line")
def test_sqlite_changing_or_deleting_a_line_adjusts_the_totals(post):
    """SQLite has no immutability trigger: a line changed or deleted around the models still leaves the totals
    equal to the lines."""
    entry = post("2025-04-01", ("100", 500), ("400", -500))
    JournalLine.objects.filter(entry=entry, line_no=1).update(debit=Decimal("400.25"))
    assert stored_totals() == totals_from_lines()
    JournalLine.objects.filter(entry=entry, line_no=1).update(account=Account.objects.get(code="101"))
    assert stored_totals() == totals_from_lines()
    JournalLine.objects.filter(entry=entry)._raw_delete(connection.alias)
    assert stored_totals() == totals_from_lines() == {}
