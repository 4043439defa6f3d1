"""The resolve page in a real browser (headless Chromium), against the fake GaluchatAPI."""

import pytest

from geo.models import PointLookup


@pytest.mark.django_db(transaction=True)
def test_staff_paste_coordinates_and_see_codes(admin_login, live_server, fake_galuchat):
    page = admin_login()
    page.goto(f"{live_server.url}/admin/geo/pointlookup/")
    page.click("text=地点を判定")
    page.select_option("#id_granularity", "admin")
    page.fill("#id_coordinates", "35.68283,139.75945,東京駅\n35.6895,139.6917,都庁\n0,0,海上")
    page.fill("#id_name", "都内サンプル")
    page.click("input[type=submit][value=判定する]")
    page.wait_for_selector("table.geo-results")
    rows = page.locator("table.geo-results tbody tr")
    assert rows.count() == 3
    assert "東京駅" in rows.nth(0).inner_text() and "null" in rows.nth(2).inner_text()
    assert "3 地点を判定しました" in page.content()
    page.screenshot(path="/tmp/geo-admin-resolve.png", full_page=True)
    assert PointLookup.objects.get().name == "都内サンプル"
