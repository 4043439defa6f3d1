"""build_cart_mandates: catalogue prices only, the seed's rules, a valid AP2 v0.1 CartMandate, signing."""

import datetime
from decimal import Decimal

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcpsite.core.errors import Conflict, InvalidParams, NotFound
from merchant.mandates import cart_hash, cart_totals

from .ap2_models import CartMandate

pytestmark = pytest.mark.django_db

ADDRESS = {
    "recipient": "山田太郎",
    "addressLine": ["東京都渋谷区1-2-3"],
    "city": "渋谷区",
    "country": "JP",
    "postalCode": "150-0001",
}


@pytest.fixture
def build(call_tool):
    def run(items, products=(), shipping_address=ADDRESS):
        args = {"cart_plan": {"items": items}, "products": list(products)}
        if shipping_address is not None:
            args["shipping_address"] = shipping_address
        return call_tool("build_cart_mandates", args)

    return run


def test_seed_example_follows_the_rules_not_the_seeds_figures(catalogue, build):
    cal, hoodie = catalogue["MUGIBO-CAL-2025"], catalogue["MUGIBO-HOODIE"]
    result = build([{"product_id": cal.pk, "quantity": 2}, {"product_id": hoodie.pk, "quantity": 1}])
    contents = result["cart_mandate"]["contents"]
    # 2 x 1980 + 3500 = 7460 >= 5000: free shipping; tax 10% of 7460 = 746; total 8206
    # (the seed's example shows shipping 500 and total 8108, inconsistent with its own rules).
    assert contents["metadata"]["subtotal"] == 7460.0
    assert contents["metadata"]["shipping_fee"] == 0.0
    assert contents["metadata"]["tax"] == 746.0
    assert contents["total"] == {"value": 8206.0, "currency": "JPY"}
    assert contents["display_items"][0] == {
        "label": "むぎぼーカレンダー2025",
        "amount": {"value": 3960.0, "currency": "JPY"},
        "refund_period": 2592000,
    }
    assert contents["metadata"]["raw_items"][0] == {
        "product_id": cal.pk,
        "sku": "MUGIBO-CAL-2025",
        "name": "むぎぼーカレンダー2025",
        "quantity": 2,
        "unit_price_jpy": 1980.0,
        "total_price_jpy": 3960.0,
    }
    assert contents["merchant_id"] == "did:ap2:merchant:mugibo_merchant"
    assert contents["shipping_address"] == ADDRESS
    assert result["cart_mandate"]["type"] == "CartMandate"
    assert result["cart_mandate"]["merchant_authorization"] is None
    assert result["cart_mandate"]["created_at"].endswith("Z")


def test_mandate_validates_as_ap2_v01_cart_mandate(catalogue, build):
    cal = catalogue["MUGIBO-CAL-2025"]
    mandate = CartMandate.model_validate(build([{"product_id": cal.pk, "quantity": 1}])["cart_mandate"])
    details = mandate.contents.payment_request.details
    assert mandate.contents.id.startswith("cart_")
    assert mandate.contents.user_cart_confirmation_required is True
    assert mandate.contents.merchant_name == "Demo Merchant"
    assert [i.label for i in details.display_items] == ["むぎぼーカレンダー2025", "送料", "消費税"]
    assert details.display_items[0].refund_period == 30  # AP2: days
    # 1980 < 5000: shipping 500; tax floor((1980 + 500) x 0.1) = 248; total 2728
    assert [i.amount.value for i in details.display_items] == [1980.0, 500.0, 248.0]
    assert details.total.amount.value == 2728.0 == sum(i.amount.value for i in details.display_items)
    assert {i.amount.currency for i in details.display_items} == {"JPY"}
    address = mandate.contents.payment_request.shipping_address
    assert address.address_line == ["東京都渋谷区1-2-3"] and address.postal_code == "150-0001"
    expiry = datetime.datetime.fromisoformat(mandate.contents.cart_expiry)
    assert expiry - datetime.datetime.now(datetime.UTC) > datetime.timedelta(minutes=29)


def test_prices_come_from_the_database_not_the_agent(catalogue, build):
    cal = catalogue["MUGIBO-CAL-2025"]
    forged = [{"id": cal.pk, "name": "改ざん", "sku": "X", "price_jpy": 1.0}]
    result = build([{"product_id": cal.pk, "quantity": 1}], products=forged)
    raw = result["cart_mandate"]["contents"]["metadata"]["raw_items"][0]
    assert (raw["name"], raw["sku"], raw["unit_price_jpy"]) == ("むぎぼーカレンダー2025", "MUGIBO-CAL-2025", 1980.0)
    assert result["warnings"] and "1980.0" in result["warnings"][0]


def test_tax_rounds_down_to_whole_yen(catalogue, build):
    sticker = catalogue["MUGIBO-STICKER"]  # 500 yen
    sticker.price_cents = 33333  # 333.33 yen
    sticker.save()
    contents = build([{"product_id": sticker.pk, "quantity": 1}])["cart_mandate"]["contents"]
    assert contents["metadata"]["tax"] == 83.0  # floor((333.33 + 500) x 0.1) = floor(83.333)
    assert contents["total"]["value"] == 916.33


def test_rules_are_configurable(settings):
    settings.SHIPPING_FEE = Decimal("800")
    settings.FREE_SHIPPING_THRESHOLD = Decimal("10000")
    settings.TAX_RATE = Decimal("0.08")
    totals = cart_totals(Decimal("9999"))
    assert (totals.shipping_fee, totals.tax, totals.total) == (Decimal("800"), Decimal("863"), Decimal("11662"))
    assert cart_totals(Decimal("10000")).shipping_fee == 0


def test_repeated_product_quantities_add_up(catalogue, build):
    cal = catalogue["MUGIBO-CAL-2025"]
    result = build([{"product_id": cal.pk, "quantity": 1}, {"product_id": cal.pk, "quantity": 2}])
    assert result["cart_mandate"]["contents"]["metadata"]["raw_items"][0]["quantity"] == 3


def test_unknown_and_inactive_products_are_404(catalogue, build):
    poster = catalogue["MUGIBO-POSTER-2024"]
    with pytest.raises(NotFound) as exc:
        build([{"product_id": 999999, "quantity": 1}, {"product_id": poster.pk, "quantity": 1}])
    assert exc.value.data == {"unknown_product_ids": [999999, poster.pk]}


def test_quantity_above_stock_is_409(catalogue, build):
    hoodie = catalogue["MUGIBO-HOODIE"]
    with pytest.raises(Conflict) as exc:
        build([{"product_id": hoodie.pk, "quantity": 16}])
    assert exc.value.data == {
        "insufficient_stock": [
            {"product_id": hoodie.pk, "sku": "MUGIBO-HOODIE", "name": hoodie.name, "requested": 16, "available": 15}
        ]
    }
    assert "15 in stock" in exc.value.message


@pytest.mark.parametrize(
    "cart_plan",
    [
        {},
        {"items": []},
        {"items": [{"product_id": 1}]},
        {"items": [{"product_id": 1, "quantity": 0}]},
        {"items": [{"product_id": "1", "quantity": 1}]},
    ],
)
def test_malformed_cart_plan_is_invalid_params(catalogue, call_tool, cart_plan):
    with pytest.raises(InvalidParams):
        call_tool("build_cart_mandates", {"cart_plan": cart_plan, "products": []})


def test_bad_shipping_address_is_invalid_params(catalogue, build):
    cal = catalogue["MUGIBO-CAL-2025"]
    with pytest.raises(InvalidParams, match="unknown field"):
        build([{"product_id": cal.pk, "quantity": 1}], shipping_address={"street": "x"})
    with pytest.raises(InvalidParams, match="string"):
        build([{"product_id": cal.pk, "quantity": 1}], shipping_address={"city": 5})


def test_without_address_the_request_asks_for_shipping(catalogue, build):
    cal = catalogue["MUGIBO-CAL-2025"]
    mandate = CartMandate.model_validate(
        build([{"product_id": cal.pk, "quantity": 1}], shipping_address=None)["cart_mandate"]
    )
    assert mandate.contents.payment_request.shipping_address is None
    assert mandate.contents.payment_request.options.request_shipping is True


def test_hs256_signature_carries_the_cart_hash(catalogue, build, settings):
    settings.MERCHANT_SIGNING_KEY = "s" * 40
    cal = catalogue["MUGIBO-CAL-2025"]
    mandate = build([{"product_id": cal.pk, "quantity": 1}])["cart_mandate"]
    claims = jwt.decode(mandate["merchant_authorization"], "s" * 40, algorithms=["HS256"], audience="payment_processor")
    assert claims["iss"] == settings.MERCHANT_ID
    assert claims["cart_hash"] == cart_hash(mandate["contents"])
    assert claims["exp"] - claims["iat"] == settings.CART_EXPIRY_MINUTES * 60
    tampered = {**mandate["contents"], "merchant_name": "Evil"}
    assert cart_hash(tampered) != claims["cart_hash"]


def test_es256_signature_verifies_with_the_public_key(catalogue, build, settings):
    private = ec.generate_private_key(ec.SECP256R1())
    settings.MERCHANT_SIGNING_KEY = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    cal = catalogue["MUGIBO-CAL-2025"]
    token = build([{"product_id": cal.pk, "quantity": 1}])["cart_mandate"]["merchant_authorization"]
    assert jwt.get_unverified_header(token)["alg"] == "ES256"
    claims = jwt.decode(token, private.public_key(), algorithms=["ES256"], audience="payment_processor")
    assert len(claims["cart_hash"]) == 64


def test_a_mandate_shares_no_constant_with_the_next(catalogue, build):
    """to_jsonable hands plain JSON back as it is, so the mandate must hold its own method_data, not the module's.
    (Without an address the whole result is plain JSON; an address list appears twice, and shared lists are copied.)
    """
    cal = catalogue["MUGIBO-CAL-2025"]

    def payment_request():
        mandate = build([{"product_id": cal.pk, "quantity": 1}], shipping_address=None)["cart_mandate"]
        return mandate["contents"]["payment_request"]

    payment_request()["method_data"][0]["data"]["network"].append("changed")
    assert payment_request()["method_data"] == [
        {"supported_methods": "CARD", "data": {"network": ["visa", "mastercard", "jcb", "amex"]}}
    ]
