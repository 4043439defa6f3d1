"""manage.py seed_ledger: the chart of accounts, a balanced sample year, idempotent, --scale."""

import datetime

import pytest
from django.core.management import call_command

from ledger import selectors
from ledger.models import Account, JournalEntry, JournalLine

pytestmark = pytest.mark.django_db


def test_seed_is_idempotent_and_balanced():
    call_command("seed_ledger", verbosity=0)
    counts = (Account.objects.count(), JournalEntry.objects.count(), JournalLine.objects.count())
    call_command("seed_ledger", verbosity=0)
    assert (Account.objects.count(), JournalEntry.objects.count(), JournalLine.objects.count()) == counts
    assert {"100": "現金", "101": "預金", "400": "売上", "500": "仕入"}.items() <= dict(
        Account.objects.values_list("code", "name")
    ).items()
    year_end = datetime.date(2026, 3, 31)
    sheet = selectors.balance_sheet(as_of=year_end)
    assert sheet.verified and sheet.assets.total > 0
    assert selectors.income_statement(start=datetime.date(2025, 4, 1), end=year_end).net_income != 0
    assert selectors.unbalanced_entry_ids() == []


def test_scale_adds_two_line_entries_once():
    call_command("seed_ledger", "--no-sample", "--scale", "120", verbosity=0)
    assert (JournalEntry.objects.count(), JournalLine.objects.count()) == (120, 240)
    call_command("seed_ledger", "--no-sample", "--scale", "150", verbosity=0)
    assert (JournalEntry.objects.count(), JournalLine.objects.count()) == (150, 300)
    assert selectors.trial_balance(as_of=datetime.date(2030, 1, 1)).balanced
