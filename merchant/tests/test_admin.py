"""Merchandiser admin: stock filter, Japanese-aware search, stock adjustments through services."""

from decimal import Decimal

import pytest
from django.urls import reverse

from merchant.models import InventoryMovement, Product

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(admin_client):
    return admin_client


def test_adjust_stock_refuses_anonymous_non_staff_and_staff_without_permission(client, django_user_model, catalogue):
    mug = catalogue["MUGIBO-MUG"]
    url = reverse("admin:merchant_product_adjust_stock", args=[mug.pk])
    sale = {"reason": "sale", "quantity": 1, "note": "x"}
    response = client.post(url, sale)
    assert response.status_code == 302 and "/admin/login/" in response.url
    client.force_login(django_user_model.objects.create_user("customer", password="x" * 12))
    response = client.post(url, sale)
    assert response.status_code == 302 and "/admin/login/" in response.url
    client.force_login(django_user_model.objects.create_user("clerk", password="x" * 12, is_staff=True))
    response = client.post(url, sale)
    # A 403 in the admin's chrome, as for any admin page staff may not open (not a redirect to the index).
    assert response.status_code == 403
    assert 'id="site-name"' in response.content.decode()
    assert client.get(url).status_code == 403
    mug.refresh_from_db()
    assert mug.inventory_count == catalogue["MUGIBO-MUG"].inventory_count
    assert not InventoryMovement.objects.filter(reason="sale").exists()


def test_changelist_low_stock_filter(staff, catalogue):
    url = reverse("admin:merchant_product_changelist")
    out = staff.get(url, {"stock": "out"}).content.decode()
    assert "MUGIBO-PLUSH-S" in out and "MUGIBO-CAL-2025" not in out
    low = staff.get(url, {"stock": "low"}).content.decode()
    assert "MUGIBO-POSTER-2024" in low and "MUGIBO-HOODIE" not in low


@pytest.mark.parametrize("term", ["ﾑｷﾞﾎﾞｰ", "カレンダ", "MUGIBO-CAL"])
def test_search_understands_japanese_variants(staff, catalogue, term):
    page = staff.get(reverse("admin:merchant_product_changelist"), {"q": term}).content.decode()
    assert "MUGIBO-CAL-2025" in page and "NOTE-A5-GRID" not in page


def test_stock_is_read_only_on_the_change_form(staff, catalogue):
    page = staff.get(reverse("admin:merchant_product_change", args=[catalogue["MUGIBO-MUG"].pk])).content.decode()
    assert 'name="inventory_count"' not in page and "在庫を調整" in page
    assert 'name="inventory_count"' in staff.get(reverse("admin:merchant_product_add")).content.decode()


def test_adjust_stock_page_records_a_sale(staff, catalogue):
    mug = catalogue["MUGIBO-MUG"]
    url = reverse("admin:merchant_product_adjust_stock", args=[mug.pk])
    assert "現在の在庫" in staff.get(url).content.decode()
    response = staff.post(url, {"reason": "sale", "quantity": 4, "note": "イベント販売"})
    assert response.status_code == 302
    assert Product.objects.get(pk=mug.pk).inventory_count == 26
    assert InventoryMovement.objects.get(product=mug).note == "イベント販売"


def test_adjust_stock_refuses_an_oversell_with_a_message(staff, catalogue):
    hoodie = catalogue["MUGIBO-HOODIE"]
    response = staff.post(
        reverse("admin:merchant_product_adjust_stock", args=[hoodie.pk]), {"reason": "sale", "quantity": 99}
    )
    assert response.status_code == 200 and "在庫は 15 点しかないため" in response.content.decode()
    assert Product.objects.get(pk=hoodie.pk).inventory_count == 15


def test_correction_sets_the_counted_stock(staff, catalogue):
    hoodie = catalogue["MUGIBO-HOODIE"]
    staff.post(
        reverse("admin:merchant_product_adjust_stock", args=[hoodie.pk]), {"reason": "correction", "quantity": 0}
    )
    assert Product.objects.get(pk=hoodie.pk).inventory_count == 0
    assert InventoryMovement.objects.get(product=hoodie).delta == -15


def test_record_sale_action(staff, catalogue):
    ids = [catalogue["MUGIBO-MUG"].pk, catalogue["MUGIBO-PLUSH-S"].pk]
    response = staff.post(
        reverse("admin:merchant_product_changelist"),
        {"action": "record_one_sale", "_selected_action": ids},
        follow=True,
    )
    text = response.content.decode()
    assert "販売を記録しました: MUGIBO-MUG" in text and "在庫切れのため記録しませんでした: MUGIBO-PLUSH-S" in text
    assert Product.objects.get(pk=ids[0]).inventory_count == 29


def test_movements_are_read_only(staff, catalogue):
    assert staff.get(reverse("admin:merchant_inventorymovement_add")).status_code == 403


def test_products_and_stock_movements_export_as_csv(staff, catalogue):
    from mcpsite.tests.exports import read_csv

    mug = catalogue["MUGIBO-MUG"]
    staff.post(reverse("admin:merchant_product_adjust_stock", args=[mug.pk]), {"reason": "restock", "quantity": 3})
    products = read_csv(staff.get("/admin/merchant/product/export.csv?stock=out"))
    assert [row[0] for row in products[1:]] == ["MUGIBO-PLUSH-S"]
    # Prices in yen as a number a spreadsheet sums; yes/no as words.
    header, plush = products[0], products[1]
    assert header[4] == "価格（円）" and header[-1] == "有効"
    plush_product = Product.objects.get(sku="MUGIBO-PLUSH-S")
    assert Decimal(plush[4]) * 100 == plush_product.price_cents and plush[-1] == "はい"
    from mcpsite.tests.exports import read_xlsx

    rows, sheet = read_xlsx(staff.get("/admin/merchant/product/export.xlsx?stock=out"))
    assert rows[1][0] == "MUGIBO-PLUSH-S" and rows[1][4] * 100 == plush_product.price_cents
    assert sheet.cell(row=2, column=5).number_format.startswith('"¥"') and rows[1][-1] == "はい"
    movements = read_csv(staff.get("/admin/merchant/inventorymovement/export.csv"))
    assert movements[1][1] == "MUGIBO-MUG" and movements[1][3] == "入荷" and movements[1][4] == "3"


def test_prices_are_entered_and_shown_in_yen_and_stored_in_hundredths(staff, catalogue):
    """Typing 1500 for ¥1,500 prices the product at ¥1,500 (stored as the seed's 150000), not ¥15."""
    mug = catalogue["MUGIBO-MUG"]
    url = reverse("admin:merchant_product_change", args=[mug.pk])
    form = staff.get(url).context["adminform"].form
    assert form.initial["price"] * 100 == mug.price_cents
    data = {
        **{name: value for name, value in form.initial.items() if value is not None and name != "id"},
        "price": "1500",
        "description": mug.description,
        **{f"movements-{name}": "0" for name in ("TOTAL_FORMS", "INITIAL_FORMS")},
    }
    response = staff.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    mug.refresh_from_db()
    assert mug.price_cents == 150000
    listing = staff.get(reverse("admin:merchant_product_changelist"), {"q": mug.sku}).content.decode()
    assert "¥1,500" in listing
    response = staff.post(url, {**data, "price": "19.999"})
    assert response.status_code == 200 and "price" in response.context["adminform"].form.errors
    mug.refresh_from_db()
    assert mug.price_cents == 150000
