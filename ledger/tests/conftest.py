"""Ledger test fixtures: the seed's chart of accounts and a helper that posts entries."""

import datetime
from decimal import Decimal

import pytest

from ledger import seeding, services
from ledger.services import LineInput


@pytest.fixture
def chart(db):
    """The Japanese small-business chart of accounts from seed_ledger (現金 100, 売上 400, 仕入 500…)."""
    seeding.chart_of_accounts_ensure()


@pytest.fixture
def post(chart):
    """post("2024-01-15", ("500", 10000), ("100", -10000)) -> JournalEntry; positive = debit, negative = credit."""

    def make(date, *lines, description="テスト仕訳"):
        return services.journal_entry_create(
            date=datetime.date.fromisoformat(date),
            description=description,
            lines=[
                LineInput(
                    code, debit=max(Decimal(str(amount)), Decimal(0)), credit=max(-Decimal(str(amount)), Decimal(0))
                )
                for code, amount in lines
            ],
        )

    return make
