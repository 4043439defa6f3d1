"""Reports: SQL aggregation in a constant number of queries, and properties that hold for any books."""

import datetime
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import selectors, services
from ledger.models import Account, JournalLine
from ledger.services import LineInput

pytestmark = pytest.mark.django_db

CODES = ["100", "101", "110", "200", "250", "300", "310", "400", "410", "500", "600", "610"]
START = datetime.date(2024, 1, 1)


def test_reports_take_a_constant_number_of_queries(post, django_assert_num_queries):
    def reports():
        as_of = datetime.date(2024, 12, 31)
        selectors.balance_sheet(as_of=as_of)
        selectors.income_statement(start=START, end=as_of)
        selectors.trial_balance(as_of=as_of)
        selectors.account_balance(account=cash, as_of=as_of)

    cash = Account.objects.get(code="100")
    post("2024-01-02", ("100", 1000), ("400", -1000))
    with django_assert_num_queries(7):
        reports()
    for day in range(1, 28):
        post(f"2024-02-{day:02d}", ("100", day), ("410", -day / 2), ("400", -day / 2))
    with django_assert_num_queries(7) as captured:
        reports()
    aggregate = next(q["sql"] for q in captured.captured_queries if "GROUP BY" in q["sql"])
    assert "SUM" in aggregate.upper()


def test_trial_balance_lists_active_accounts_and_agrees(post):
    post("2024-01-02", ("101", 500000), ("300", -500000))
    post("2024-01-03", ("500", 1200), ("200", -1200))
    tb = selectors.trial_balance(as_of=datetime.date(2024, 1, 31))
    assert [(r.account.code, r.debit, r.credit) for r in tb.rows] == [
        ("101", 500000, 0),
        ("200", 0, 1200),
        ("300", 0, 500000),
        ("500", 1200, 0),
    ]
    assert tb.balanced and tb.debit_total == 501200


lines_strategy = st.lists(
    st.tuples(st.sampled_from(CODES), st.integers(min_value=1, max_value=10_000_000), st.integers(0, 99)),
    min_size=1,
    max_size=4,
)
entries_strategy = st.lists(
    st.tuples(st.integers(min_value=0, max_value=60), lines_strategy, st.sampled_from(CODES)), min_size=1, max_size=8
)


def to_entry(debits, balancing_code):
    """Debit lines plus one credit line that balances them: a valid entry by construction."""
    lines = [LineInput(code, debit=Decimal(yen) + Decimal(cents) / 100) for code, yen, cents in debits]
    lines.append(LineInput(balancing_code, credit=sum((line.debit for line in lines), Decimal(0))))
    return lines


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=entries_strategy, probes=st.lists(st.integers(-1, 62), min_size=1, max_size=4))
def test_any_valid_books_balance_at_every_date(chart, entries, probes):
    """Trial balance zero and balance sheet verified at every date; balance(as_of) = sum of lines to as_of.

    Examples share one database, so expectations are measured against the state before the example.
    """
    dates = [START + datetime.timedelta(days=p) for p in probes]
    accounts = {a.code: a for a in Account.objects.filter(code__in=CODES)}
    before = {(c, d): selectors.account_balance(account=accounts[c], as_of=d) for c in CODES for d in dates}
    posted = []
    for offset, debits, balancing in entries:
        date = START + datetime.timedelta(days=offset)
        lines = to_entry(debits, balancing)
        services.journal_entry_create(date=date, description="property", lines=lines)
        posted.append((date, lines))
    for d in dates:
        tb = selectors.trial_balance(as_of=d)
        assert tb.debit_total == tb.credit_total
        sheet = selectors.balance_sheet(as_of=d)
        assert sheet.verified, (d, sheet)
        for code in CODES:
            account = accounts[code]
            delta = sum(
                (
                    line.debit - line.credit
                    for date, lines in posted
                    if date <= d
                    for line in lines
                    if line.account_code == code
                ),
                Decimal(0),
            )
            expected = before[(code, d)] + (delta if account.is_debit_normal else -delta)
            assert selectors.account_balance(account=account, as_of=d) == expected


def test_account_balance_equals_sum_of_lines_in_sql(post):
    post("2024-01-02", ("100", "1234.56"), ("400", "-1234.56"))
    post("2024-01-05", ("500", "0.44"), ("100", "-0.44"))
    cash = Account.objects.get(code="100")
    raw = sum(line.debit - line.credit for line in JournalLine.objects.filter(account=cash))
    assert selectors.account_balance(account=cash, as_of=datetime.date(2024, 1, 5)) == raw == Decimal("1234.12")
