"""Posting and reversing entries; deactivating accounts."""

import datetime
from decimal import Decimal

import pytest

from ledger import selectors, services
from ledger.models import Account, JournalEntry
from mcpsite.core.errors import Conflict, InvalidParams, NotFound

pytestmark = pytest.mark.django_db


def test_reversal_swaps_every_line_and_links_the_original(post):
    original = post("2024-01-15", ("500", 10000), ("100", -6000), ("200", -4000))
    reversal = services.journal_entry_reverse(entry_id=original.pk, date=datetime.date(2024, 2, 1))
    assert reversal.reversal_of == original
    assert reversal.description == "取消: テスト仕訳"
    swapped = [(line.account.code, line.debit, line.credit) for line in reversal.lines.order_by("line_no")]
    assert swapped == [("500", 0, 10000), ("100", 6000, 0), ("200", 4000, 0)]
    for code in ("500", "100", "200"):
        account = Account.objects.get(code=code)
        assert selectors.account_balance(account=account, as_of=datetime.date(2024, 1, 31)) != 0
        assert selectors.account_balance(account=account, as_of=datetime.date(2024, 2, 1)) == 0


def test_an_entry_is_reversed_once_and_reversals_are_not_reversed(post):
    original = post("2024-01-15", ("500", 100), ("100", -100))
    reversal = services.journal_entry_reverse(entry_id=original.pk)
    with pytest.raises(Conflict, match="already been reversed"):
        services.journal_entry_reverse(entry_id=original.pk)
    with pytest.raises(InvalidParams, match="itself a reversal"):
        services.journal_entry_reverse(entry_id=reversal.pk)
    assert JournalEntry.objects.count() == 2


def test_reversal_dates_and_missing_entries(post):
    original = post("2024-01-15", ("500", 100), ("100", -100))
    with pytest.raises(InvalidParams, match="before the original"):
        services.journal_entry_reverse(entry_id=original.pk, date=datetime.date(2024, 1, 14))
    with pytest.raises(NotFound):
        services.journal_entry_reverse(entry_id="not-a-uuid")


def test_reversal_may_touch_a_deactivated_account(post):
    original = post("2024-01-15", ("650", 100), ("100", -100))
    services.account_set_active(account=Account.objects.get(code="650"), active=False)
    with pytest.raises(InvalidParams, match="Inactive"):
        post("2024-01-16", ("650", 100), ("100", -100))
    assert services.journal_entry_reverse(entry_id=original.pk).lines.count() == 2


def test_lines_validate_reports_the_first_problem():
    line = services.LineInput
    with pytest.raises(InvalidParams, match="at least 2 lines"):
        services.journal_lines_validate(lines=[line("100", debit=Decimal(1))])
    with pytest.raises(InvalidParams, match=r"lines\[1\].creditAmount must not be negative"):
        services.journal_lines_validate(lines=[line("100", debit=Decimal(1)), line("400", credit=Decimal(-1))])


def test_yen_formatting():
    assert services.yen(Decimal("430000.00")) == "430,000"
    assert services.yen(Decimal("1234.5")) == "1,234.50"
    assert services.yen(Decimal("-80000")) == "-80,000"
