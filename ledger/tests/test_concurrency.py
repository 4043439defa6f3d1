"""PostgreSQL concurrency: parallel posting loses nothing; parallel reversals make exactly one reversal.

Threads are released together by a barrier; each closes its own connection. The control test
switches the lock and the one-to-one constraint off and shows the duplicate reversal really happens.
"""

import datetime
import threading
from decimal import Decimal

import pytest
from django.db import connection

from ledger import selectors, services
from ledger.models import Account, JournalEntry, JournalLine
from ledger.services import LineInput
from mcpsite.core.errors import ApplicationError
from mcpsite.mcp.wire import jsonrpc_code
from mcpsite.tests.concurrency import run_together

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 16


def test_sixteen_threads_posting_lose_nothing_and_stay_balanced(chart):
    per_thread = 5

    def post_some(i):
        for k in range(per_thread):
            amount = Decimal(1000 * (i + 1) + k) + Decimal("0.25")
            services.journal_entry_create(
                date=datetime.date(2024, 4, 1 + k),
                description=f"thread {i} #{k}",
                lines=[
                    LineInput("100", debit=amount),
                    LineInput("400", credit=amount - 1),
                    LineInput("410", credit=Decimal(1)),
                ],
            )
        return i

    results, errors = run_together(post_some, THREADS)
    assert errors == []
    assert len(results) == THREADS
    assert JournalEntry.objects.count() == THREADS * per_thread
    assert JournalLine.objects.count() == THREADS * per_thread * 3
    expected = sum(Decimal(1000 * (i + 1) + k) + Decimal("0.25") for i in range(THREADS) for k in range(per_thread))
    as_of = datetime.date(2024, 12, 31)
    assert selectors.account_balance(account=Account.objects.get(code="100"), as_of=as_of) == expected
    assert selectors.trial_balance(as_of=as_of).balanced
    assert selectors.balance_sheet(as_of=as_of).verified
    assert selectors.unbalanced_entry_ids() == []


def test_parallel_reversals_of_one_entry_make_exactly_one(post):
    original = post("2024-01-15", ("500", 10000), ("100", -10000))
    results, errors = run_together(lambda i: services.journal_entry_reverse(entry_id=original.pk), 8)
    assert len(results) == 1
    assert len(errors) == 7 and all(isinstance(e, ApplicationError) and jsonrpc_code(e) == 409 for e in errors)
    assert JournalEntry.objects.filter(reversal_of=original).count() == 1


def test_control_without_the_lock_and_constraint_reversals_duplicate(post, monkeypatch):
    """Control: the race is real. Without FOR UPDATE (and the one-to-one constraint) both threads pass
    the "not yet reversed" check and both post a reversal."""
    original = post("2024-01-15", ("500", 10000), ("100", -10000))
    n = 2
    both_checked = threading.Barrier(n)
    real_post = services._post

    def unlocked(entry_id):
        return JournalEntry.objects.get(pk=entry_id)  # no FOR UPDATE

    def post_once_both_checked(**kwargs):
        both_checked.wait(timeout=30)  # every thread has found it not yet reversed before any writes
        return real_post(**kwargs)

    monkeypatch.setattr(services, "_lock_entry_for_reversal", unlocked)
    monkeypatch.setattr(services, "_post", post_once_both_checked)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'ledger_journalentry'::regclass AND contype = 'u'"
        )
        (unique_name,) = cursor.fetchone()
        cursor.execute(f'ALTER TABLE ledger_journalentry DROP CONSTRAINT "{unique_name}"')
    try:
        results, errors = run_together(lambda i: services.journal_entry_reverse(entry_id=original.pk), n)
        assert errors == []
        assert JournalEntry.objects.filter(reversal_of=original).count() == 2  # the race happened
    finally:
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE ledger_journalline, ledger_journalentry")
            cursor.execute(f'ALTER TABLE ledger_journalentry ADD CONSTRAINT "{unique_name}" UNIQUE (reversal_of_id)')
