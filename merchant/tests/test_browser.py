"""The stock pages as staff see them, in a real browser."""

import pytest

from merchant.catalog import seed_products
from merchant.models import Product

pytestmark = pytest.mark.django_db(transaction=True)


def test_low_stock_list_and_adjust_stock_page(admin_login, live_server):
    for product in seed_products():
        product.save()
    page = admin_login()
    page.goto(f"{live_server.url}/admin/merchant/product/?q=ﾑｷﾞﾎﾞｰ")
    page.wait_for_selector("#result_list")
    assert "むぎぼーカレンダー2025" in page.inner_text("#result_list")
    page.screenshot(path="/tmp/merchant-changelist.png", full_page=True)

    hoodie = Product.objects.get(sku="MUGIBO-HOODIE")
    page.goto(f"{live_server.url}/admin/merchant/product/{hoodie.pk}/adjust-stock/")
    page.select_option("#id_reason", "sale")
    page.fill("#id_quantity", "3")
    page.fill("#id_note", "ポップアップストア")
    page.click("#content-main input[type=submit]")  # not the header's search button
    page.wait_for_url(f"{live_server.url}/admin/merchant/product/{hoodie.pk}/change/")
    assert "在庫は 12 になりました" in page.inner_text(".messagelist")
    page.goto(f"{live_server.url}/admin/merchant/product/{hoodie.pk}/adjust-stock/")
    assert page.inner_text("#current-stock") == "12"
    assert "ポップアップストア" in page.inner_text("#content-main")
    page.screenshot(path="/tmp/merchant-adjust-stock.png", full_page=True)
    assert Product.objects.get(pk=hoodie.pk).inventory_count == 12
