"""Admin for accountants: entries validated on save, read-only once posted, reversal action, reports."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from ledger.models import Account, JournalEntry

pytestmark = pytest.mark.django_db

ADD_URL = "/admin/ledger/journalentry/add/"


def entry_form(lines, date="2024-01-15", description="商品仕入"):
    data = {
        "date": date,
        "description": description,
        "lines-TOTAL_FORMS": str(len(lines)),
        "lines-INITIAL_FORMS": "0",
        "lines-MIN_NUM_FORMS": "0",
        "lines-MAX_NUM_FORMS": "1000",
    }
    for i, (code, debit, credit) in enumerate(lines):
        data[f"lines-{i}-account"] = str(Account.objects.get(code=code).pk)
        data[f"lines-{i}-debit"] = str(debit)
        data[f"lines-{i}-credit"] = str(credit)
    return data


def test_unbalanced_entry_is_refused_with_a_clear_message(admin_client, chart):
    response = admin_client.post(ADD_URL, entry_form([("500", 10000, 0), ("100", 0, 9000)]))
    assert response.status_code == 200
    assert "借方 10,000 ≠ 貸方 9,000" in response.content.decode()
    assert JournalEntry.objects.count() == 0


def test_single_line_entry_is_refused(admin_client, chart):
    response = admin_client.post(ADD_URL, entry_form([("500", 10000, 0)]))
    assert "仕訳には2行以上が必要です" in response.content.decode()
    assert JournalEntry.objects.count() == 0


def test_balanced_entry_is_posted_and_then_read_only(admin_client, admin_user, chart):
    response = admin_client.post(ADD_URL, entry_form([("500", 10000, 0), ("100", 0, 10000)]))
    assert response.status_code == 302, response.content.decode()[:2000]
    entry = JournalEntry.objects.get()
    assert entry.created_by == admin_user
    assert [(line.account.code, line.debit, line.credit) for line in entry.lines.order_by("line_no")] == [
        ("500", 10000, 0),
        ("100", 0, 10000),
    ]
    change = admin_client.get(reverse("admin:ledger_journalentry_change", args=[entry.pk]))
    assert change.status_code == 200
    assert 'name="description"' not in change.content.decode()  # view-only page
    posted = admin_client.post(reverse("admin:ledger_journalentry_change", args=[entry.pk]), {"description": "x"})
    assert posted.status_code == 403
    assert JournalEntry.objects.get().description == "商品仕入"


def test_reverse_action_posts_a_reversal_once(admin_client, post):
    entry = post("2024-01-15", ("500", 10000), ("100", -10000))
    url = reverse("admin:ledger_journalentry_changelist")
    data = {"action": "reverse_entries", "_selected_action": [str(entry.pk)]}
    admin_client.post(url, data)
    assert JournalEntry.objects.filter(reversal_of=entry).count() == 1
    response = admin_client.post(url, data, follow=True)
    assert "取消済みです" in response.content.decode()
    assert JournalEntry.objects.count() == 2


@pytest.mark.parametrize(
    ("name", "query", "expected"),
    [
        ("ledger_balance_sheet", "?as_of=2024-03-31", "資産合計: 1,000円 / 負債・純資産合計: 1,000円"),
        ("ledger_income_statement", "?start=2024-01-01&end=2024-12-31", "当期純利益: 1,000円"),
        ("ledger_income_statement", "?start=2024-12-01&end=2024-01-01", "開始日が終了日より後です"),
        ("ledger_trial_balance", "?as_of=2024-03-31", "貸借一致"),
        ("ledger_trial_balance", "?as_of=not-a-date", "貸借一致"),
    ],
)
def test_report_pages(admin_client, post, name, query, expected):
    post("2024-03-01", ("100", 1000), ("400", -1000))
    response = admin_client.get(reverse(f"admin:{name}") + query)
    assert response.status_code == 200
    assert expected in response.content.decode()


def test_income_statement_defaults_to_the_latest_fiscal_year_with_entries(admin_client, post):
    """April to March (the dashboard's year), not the calendar year; the latest year with entries, not an empty
    new one; with only an end date, that date's fiscal year up to it."""
    import datetime

    from django.utils import timezone

    from ledger import selectors

    post("2024-03-01", ("100", 1000), ("400", -1000))  # fiscal year 2023
    post("2024-04-02", ("100", 300), ("400", -300))  # fiscal year 2024
    url = reverse("admin:ledger_income_statement")
    response = admin_client.get(url)
    assert (response.context["start"], response.context["end"]) == (
        datetime.date(2024, 4, 1),
        datetime.date(2025, 3, 31),
    )
    assert "当期純利益: 300円" in response.content.decode()
    response = admin_client.get(url, {"end": "2024-03-15"})
    assert (response.context["start"], response.context["end"]) == (
        datetime.date(2023, 4, 1),
        datetime.date(2024, 3, 15),
    )
    # An entry in today's fiscal year makes it the default, up to today.
    today = timezone.localdate()
    post(today.isoformat(), ("100", 5), ("400", -5))
    response = admin_client.get(url)
    year = selectors.fiscal_year_of(day=today)
    assert (response.context["start"], response.context["end"]) == (datetime.date(year, 4, 1), today)


def test_reports_are_staff_only(client):
    response = client.get(reverse("admin:ledger_balance_sheet"))
    assert response.status_code == 302


@pytest.mark.parametrize("name", ["ledger_balance_sheet", "ledger_income_statement", "ledger_trial_balance"])
def test_reports_need_the_view_permission_on_accounts(client, django_user_model, chart, name):
    from django.contrib.auth.models import Permission

    assert client.get(reverse(f"admin:{name}")).status_code == 302  # anonymous: to the login page
    clerk = django_user_model.objects.create_user("clerk", password="x" * 12, is_staff=True)
    client.force_login(clerk)
    assert client.get(reverse(f"admin:{name}")).status_code == 403  # staff, but not an accountant
    clerk.user_permissions.add(Permission.objects.get(codename="view_account"))
    assert client.get(reverse(f"admin:{name}")).status_code == 200


def test_account_with_history_keeps_code_and_type(admin_client, post):
    post("2024-03-01", ("100", 1000), ("400", -1000))
    cash = Account.objects.get(code="100")
    response = admin_client.get(reverse("admin:ledger_account_change", args=[cash.pk]))
    assert 'name="code"' not in response.content.decode()
    admin_client.post(
        reverse("admin:ledger_account_changelist"), {"action": "deactivate", "_selected_action": [str(cash.pk)]}
    )
    cash.refresh_from_db()
    assert cash.is_active is False


def test_entry_list_shows_amounts_in_a_constant_number_of_queries(admin_client, post):
    def list_page():
        with CaptureQueriesContext(connection) as queries:
            page = admin_client.get("/admin/ledger/journalentry/").content.decode()
        return page, len(queries)

    post("2024-01-15", ("500", 1200), ("100", -1200))
    _page, few = list_page()
    for day in range(1, 21):
        post(f"2024-02-{day:02d}", ("500", 1000 + day), ("100", -(1000 + day)))
    page, many = list_page()
    assert many == few
    assert "1,020" in page and "1,200" in page  # each entry's debit total


def test_one_accounts_entries_are_filtered_by_its_id_without_a_join(admin_client, post):
    """The account filter's EXISTS names the account's id: a join on its code makes PostgreSQL hash every line of
    the account to count the list (docs/staff-pages.md, "Large lists")."""
    post("2024-01-15", ("500", 1200), ("100", -1200))
    post("2024-01-16", ("650", 300), ("101", -300))
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get("/admin/ledger/journalentry/", {"account": "100"})
    assert [e.date.day for e in response.context["cl"].result_list] == [15]
    listing = [q["sql"] for q in queries if "EXISTS" in q["sql"] and "ledger_journalline" in q["sql"]]
    assert listing and not any("ledger_account" in sql.split("EXISTS", 1)[1] for sql in listing)
    assert not admin_client.get("/admin/ledger/journalentry/", {"account": "999"}).context["cl"].result_list


def test_every_report_line_opens_the_entries_behind_it_for_that_period(admin_client, post):
    """Balance sheet, P&L and trial balance: each account's line links to the journal entries with a line on that
    account in the report's period, and those entries' lines on it add up to the line's figure."""
    import datetime
    import re
    from decimal import Decimal
    from html import unescape

    from ledger.models import JournalLine

    post("2024-03-01", ("100", 1000), ("400", -1000))  # before the P&L's period
    post("2024-04-10", ("100", 500), ("400", -500))
    post("2024-05-20", ("650", 200), ("100", -200))
    post("2024-07-01", ("100", 70), ("400", -70))  # after the balance sheet's date
    reports = [
        ("ledger_balance_sheet", {"as_of": "2024-06-30"}, None, datetime.date(2024, 6, 30)),
        ("ledger_income_statement", {"start": "2024-04-01", "end": "2024-06-30"}, datetime.date(2024, 4, 1), None),
        ("ledger_trial_balance", {"as_of": "2024-06-30"}, None, datetime.date(2024, 6, 30)),
    ]
    expected = {
        ("ledger_balance_sheet", "100"): Decimal(1300),
        ("ledger_income_statement", "400"): Decimal(500),
        ("ledger_income_statement", "650"): Decimal(200),
        ("ledger_trial_balance", "100"): Decimal(1300),
        ("ledger_trial_balance", "400"): Decimal(1500),
        ("ledger_trial_balance", "650"): Decimal(200),
    }
    seen = set()
    for name, query, start, end in reports:
        page = admin_client.get(reverse(f"admin:{name}"), query).content.decode()
        links = re.findall(r'<a href="(/admin/ledger/journalentry/\?[^"]+)"', page)
        assert links, name
        for link in map(unescape, links):
            response = admin_client.get(link)
            assert response.status_code == 200, link  # the list accepts the filters (no ?e=1 redirect)
            entries = list(response.context["cl"].result_list)
            code = re.search(r"account=(\d+)", link).group(1)
            lines = JournalLine.objects.filter(entry__in=entries, account__code=code)
            dates = {entry.date for entry in entries}
            assert dates and max(dates) <= (end or datetime.date(2024, 6, 30)), (name, link)
            if start is not None:
                assert min(dates) >= start, (name, link)
            net = sum((line.debit - line.credit for line in lines), Decimal(0))
            assert abs(net) == expected[name, code], (name, code, net)
            seen.add((name, code))
    assert seen == set(expected)
    # The P&L's sales line: April's 500 only (not March's 1,000 nor July's 70).
    sales = admin_client.get(
        "/admin/ledger/journalentry/", {"account": "400", "date__gte": "2024-04-01", "date__lt": "2024-07-01"}
    )
    assert [e.date for e in sales.context["cl"].result_list] == [datetime.date(2024, 4, 10)]


def test_journal_entries_export_their_lines_and_the_reports_export_as_csv(admin_client, post):
    from mcpsite.tests.exports import read_csv

    first = post("2024-04-10", ("100", 500), ("400", -500), description="売上")
    post("2024-05-20", ("650", 200), ("100", -200), description="消耗品")
    rows = read_csv(admin_client.get("/admin/ledger/journalentry/export.csv"))
    assert len(rows) == 1 + 4
    entry = sorted(row for row in rows[1:] if row[1] == str(first.pk))
    assert [row[:4] + row[5:] for row in entry] == [
        ["2024-04-10", str(first.pk), "売上", "100", "500.00", "0.00"],
        ["2024-04-10", str(first.pk), "売上", "400", "0.00", "500.00"],
    ]
    april = read_csv(admin_client.get("/admin/ledger/journalentry/export.csv?date__gte=2024-04-01&date__lt=2024-05-01"))
    assert [row[2] for row in april[1:]] == ["売上", "売上"]
    # Each report's file says what it covers: in its name, and in the first columns of every row.
    response = admin_client.get(reverse("admin:ledger_trial_balance"), {"as_of": "2024-06-30", "format": "csv"})
    assert 'filename="trial_balance-20240630.csv"' in response["Content-Disposition"]
    trial = read_csv(response)
    assert trial[0][0] == "基準日" and {row[0] for row in trial[1:]} == {"2024-06-30"}
    assert [row[1] for row in trial[1:-1]] == ["100", "400", "650"] and trial[-1][4:6] == ["700.00", "700.00"]
    response = admin_client.get(
        reverse("admin:ledger_income_statement"), {"start": "2024-04-01", "end": "2024-06-30", "format": "csv"}
    )
    assert 'filename="income_statement-20240401-20240630.csv"' in response["Content-Disposition"]
    pl = read_csv(response)
    assert pl[-1][:2] == ["2024-04-01", "2024-06-30"] and pl[-1][-1] == "300.00"
    response = admin_client.get(reverse("admin:ledger_balance_sheet"), {"as_of": "2024-06-30", "format": "csv"})
    assert 'filename="balance_sheet-20240630.csv"' in response["Content-Disposition"]
    sheet = read_csv(response)
    assert [sheet[1][0], sheet[1][2], sheet[1][4]] == ["2024-06-30", "100", "300.00"]


def test_reports_and_journal_lines_export_as_xlsx_with_typed_yen(admin_client, post):
    import datetime

    from mcpsite.tests.exports import read_xlsx

    post("2024-04-10", ("100", 500), ("400", -500), description="=売上")
    response = admin_client.get(reverse("admin:ledger_balance_sheet"), {"as_of": "2024-06-30", "format": "xlsx"})
    assert 'filename="balance_sheet-20240630.xlsx"' in response["Content-Disposition"]
    rows, sheet = read_xlsx(response)
    assert rows[0][0] == "基準日" and rows[1][0] == datetime.datetime(2024, 6, 30)
    assert rows[1][2] == "100" and rows[1][4] == 500
    assert sheet.cell(row=2, column=5).number_format.startswith('"¥"#,##0')
    lines, sheet = read_xlsx(admin_client.get("/admin/ledger/journalentry/export.xlsx"))
    assert {row[2] for row in lines[1:]} == {"'=売上"}  # text that would be a formula stays text
    assert {row[5] for row in lines[1:]} == {500, 0} and sheet.cell(row=2, column=6).number_format.startswith('"¥"')
    page = admin_client.get("/admin/ledger/journalentry/").content.decode()
    assert 'href="/admin/ledger/journalentry/export.xlsx"' in page
