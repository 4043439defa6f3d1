"""A bad merchant configuration stops `manage.py check` with a clear message."""

from decimal import Decimal

import pytest
from django.core import checks

from merchant.checks import check_settings


def ids():
    return {m.id for m in check_settings()}


def test_defaults_pass():
    assert ids() == set()


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("MEILISEARCH_URL", "localhost:7700", "merchant.E001"),
        ("MEILISEARCH_TIMEOUT_S", 0, "merchant.E003"),
        ("SHIPPING_FEE", Decimal("-1"), "merchant.E004"),
        ("TAX_RATE", Decimal("10"), "merchant.E005"),
        ("MERCHANT_ID", "", "merchant.E006"),
        ("CART_EXPIRY_MINUTES", 0, "merchant.E007"),
        ("MERCHANT_SIGNING_KEY", "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----", "merchant.E008"),
        ("MERCHANT_SIGNING_KEY", "short", "merchant.W001"),
    ],
)
def test_bad_settings_are_reported(settings, name, value, expected):
    setattr(settings, name, value)
    assert expected in ids()


def test_signing_key_is_never_echoed(settings):
    settings.MERCHANT_SIGNING_KEY = "-----BEGIN PRIVATE KEY-----\nsecret-material\n-----END PRIVATE KEY-----"
    assert all("secret-material" not in m.msg for m in check_settings())


def test_a_meilisearch_url_without_a_key_is_warned_about(settings):
    settings.MEILISEARCH_URL = "http://127.0.0.1:7700"
    settings.MEILISEARCH_MASTER_KEY = ""
    (warning,) = [m for m in check_settings() if m.id == "merchant.W003"]
    assert warning.level == checks.WARNING and "falls back to the database" in warning.msg
    settings.MEILISEARCH_MASTER_KEY = "masterKey123"
    assert "merchant.W003" not in ids()
