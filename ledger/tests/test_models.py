"""The database refuses bad rows even when Python checks are bypassed."""

import datetime
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction

from ledger.models import Account, ImmutableError, JournalEntry, JournalLine

pytestmark = pytest.mark.django_db


@pytest.fixture
def entry(post):
    return post("2024-01-15", ("500", 10000), ("100", -10000))


@pytest.mark.parametrize(
    ("debit", "credit"),
    [(Decimal(-1), Decimal(0)), (Decimal(0), Decimal(-1)), (Decimal(5), Decimal(5)), (Decimal(0), Decimal(0))],
)
def test_each_line_has_exactly_one_positive_side(entry, debit, credit):
    account = Account.objects.get(code="100")
    with pytest.raises(IntegrityError), transaction.atomic():
        JournalLine.objects.bulk_create(
            [JournalLine(entry=entry, line_no=9, account=account, debit=debit, credit=credit)]
        )


def test_account_type_must_be_known(chart):
    with pytest.raises(IntegrityError), transaction.atomic():
        Account.objects.bulk_create([Account(code="999", name="謎", type="income")])


def test_an_entry_cannot_reverse_itself(entry):
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        table = JournalEntry._meta.db_table
        pk = entry.pk if connection.features.has_native_uuid_field else entry.pk.hex
        cursor.execute(f"UPDATE {table} SET reversal_of_id = id WHERE id = %s", [pk])


def test_posted_rows_refuse_save_and_delete_in_python(entry):
    entry.description = "書き換え"
    with pytest.raises(ImmutableError):
        entry.save()
    with pytest.raises(ImmutableError):
        entry.delete()
    line = entry.lines.first()
    line.debit = Decimal(1)
    with pytest.raises(ImmutableError):
        line.save()


@pytest.mark.postgres
def test_postgres_refuses_update_and_delete_of_posted_rows(entry):
    with pytest.raises(IntegrityError), transaction.atomic():
        JournalLine.objects.filter(entry=entry).update(debit=Decimal(1))
    with pytest.raises(IntegrityError), transaction.atomic():
        JournalLine.objects.filter(entry=entry).delete()
    with pytest.raises(IntegrityError), transaction.atomic():
        JournalEntry.objects.filter(pk=entry.pk).update(date=datetime.date(2000, 1, 1))
    with pytest.raises(IntegrityError), transaction.atomic():
        JournalEntry.objects.filter(pk=entry.pk)._raw_delete(connection.alias)


@pytest.mark.parametrize("side", ["debit", "credit"])
def test_a_line_amount_beyond_what_both_databases_hold_exactly_is_refused(entry, side):
    """12,345,678,901,234.56 has 16 significant digits: SQLite would keep it as …234.6 (docs/apps/ledger.md)."""
    account = Account.objects.get(code="100")
    with pytest.raises(IntegrityError), transaction.atomic():
        JournalLine.objects.bulk_create(
            [JournalLine(entry=entry, line_no=9, account=account, **{side: Decimal("12345678901234.56")})]
        )
