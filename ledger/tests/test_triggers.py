"""PostgreSQL: the deferred constraint triggers refuse unbalanced entries at COMMIT, however written."""

import uuid

import pytest
from django.db import IntegrityError, connection, transaction

from ledger.models import Account, JournalEntry, JournalLine

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def raw_entry(cursor, lines):
    entry_id = uuid.uuid4()
    cursor.execute(
        "INSERT INTO ledger_journalentry (id, date, description, created_at) VALUES (%s, '2024-01-01', 'raw', now())",
        [entry_id],
    )
    for n, (code, debit, credit) in enumerate(lines, start=1):
        cursor.execute(
            "INSERT INTO ledger_journalline (id, entry_id, line_no, account_id, debit, credit) "
            "SELECT %s, %s, %s, id, %s, %s FROM ledger_account WHERE code = %s",
            [uuid.uuid4(), entry_id, n, debit, credit, code],
        )
    return entry_id


def test_unbalanced_raw_sql_insert_is_refused_at_commit(chart):
    atomic = transaction.atomic()
    atomic.__enter__()
    with connection.cursor() as cursor:
        raw_entry(cursor, [("100", 100, 0), ("400", 0, 90)])  # the statements themselves succeed
    with pytest.raises(IntegrityError, match="does not balance: debits 100.00 <> credits 90.00"):
        atomic.__exit__(None, None, None)  # COMMIT
    assert JournalEntry.objects.count() == JournalLine.objects.count() == 0


@pytest.mark.parametrize("lines", [[], [("100", 100, 0)]])
def test_entry_with_fewer_than_two_lines_is_refused_at_commit(chart, lines):
    # The block's exit is the COMMIT, where the deferred trigger refuses the entry.
    with pytest.raises(IntegrityError, match="at least 2 are required"), transaction.atomic(), connection.cursor() as c:
        raw_entry(c, lines)
    assert JournalEntry.objects.count() == 0


def test_balanced_raw_sql_insert_commits(chart):
    with transaction.atomic(), connection.cursor() as cursor:
        raw_entry(cursor, [("100", 100, 0), ("400", 0, 60), ("410", 0, 40)])
    assert JournalLine.objects.count() == 3


def test_update_that_unbalances_is_refused_even_without_the_immutability_trigger(post):
    """Defence in depth: with the immutability trigger off, the balance trigger still catches `.update()`."""
    entry = post("2024-01-15", ("500", 10000), ("100", -10000))
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE ledger_journalline DISABLE TRIGGER ledger_line_immutable")
    try:
        with pytest.raises(IntegrityError, match="does not balance"), transaction.atomic():
            JournalLine.objects.filter(entry=entry, account__code="500").update(debit=9999)
        with pytest.raises(IntegrityError, match="at least 2 are required"), transaction.atomic():
            JournalLine.objects.filter(entry=entry, account__code="500").delete()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE ledger_journalline ENABLE TRIGGER ledger_line_immutable")
    assert sorted(JournalLine.objects.values_list("debit", flat=True)) == [0, 10000]
    assert Account.objects.filter(code="500").exists()
