"""A real browser: an accountant opens the balance sheet, picks a date, and sees it balance."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_balance_sheet_page_with_date_picker(post, live_server, admin_login):
    post("2025-04-01", ("101", 3000000), ("300", -3000000))
    post("2025-04-10", ("110", 550000), ("400", -550000))
    post("2025-04-20", ("500", 300000), ("200", -300000))
    post("2025-05-10", ("600", 250000), ("101", -250000))
    page = admin_login()
    page.goto(f"{live_server.url}/admin/ledger/account/")
    page.click("text=貸借対照表")
    page.fill("#id_as_of", "2025-04-30")
    page.click("input[type=submit][value=表示]")
    page.wait_for_url("**as_of=2025-04-30")
    verdict = page.inner_text("#verdict")
    assert "資産合計: 3,550,000円 / 負債・純資産合計: 3,550,000円" in verdict
    assert "バランスOK" in verdict
    page.screenshot(path="/tmp/ledger-balance-sheet.png", full_page=True)
