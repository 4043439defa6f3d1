"""CartMandates: the seed's cart document and a valid AP2 v0.1 `CartMandate` in one object.

Prices, names and SKUs come from the database only; the agent's `products` argument is compared for
warnings and otherwise ignored (an agent can be wrong or manipulated).

Rules (all from settings): shipping is free when the subtotal reaches FREE_SHIPPING_THRESHOLD, else
SHIPPING_FEE; tax = (subtotal + shipping) x TAX_RATE rounded down to whole yen; total = subtotal +
shipping + tax. Money is Decimal throughout and becomes a JSON number only at the edge.
"""

from __future__ import annotations

import copy
import datetime
import functools
import hashlib
import json
import uuid
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.conf import settings

from mcpsite.core.errors import Conflict, InvalidParams, NotFound
from mcpsite.core.jsonutil import to_jsonable

from .models import Product
from .selectors import products_for_cart

CURRENCY = "JPY"
SECONDS_PER_DAY = 86_400
# AP2's reference samples accept cards; networks are informational for the shopping agent.
METHOD_DATA = [{"supported_methods": "CARD", "data": {"network": ["visa", "mastercard", "jcb", "amex"]}}]
JWT_AUDIENCE = "payment_processor"

# Address keys accepted: AP2's snake_case ContactAddress names and the W3C camelCase ones the seed uses.
ADDRESS_KEYS = {
    "recipient": "recipient",
    "organization": "organization",
    "address_line": "address_line",
    "addressLine": "address_line",
    "city": "city",
    "region": "region",
    "postal_code": "postal_code",
    "postalCode": "postal_code",
    "country": "country",
    "dependent_locality": "dependent_locality",
    "dependentLocality": "dependent_locality",
    "sorting_code": "sorting_code",
    "sortingCode": "sorting_code",
    "phone_number": "phone_number",
    "phoneNumber": "phone_number",
    "phone": "phone_number",
}


@dataclass(frozen=True)
class CartLine:
    product: Product
    quantity: int

    @property
    def unit_price(self) -> Decimal:
        return Decimal(self.product.price_cents) / 100

    @property
    def total(self) -> Decimal:
        return self.unit_price * self.quantity


@dataclass(frozen=True)
class Totals:
    subtotal: Decimal
    shipping_fee: Decimal
    tax: Decimal

    @property
    def total(self) -> Decimal:
        return self.subtotal + self.shipping_fee + self.tax


def cart_totals(subtotal: Decimal) -> Totals:
    """The shipping and tax rules (see the module docstring)."""
    shipping = Decimal(0) if subtotal >= settings.FREE_SHIPPING_THRESHOLD else settings.SHIPPING_FEE
    tax = ((subtotal + shipping) * settings.TAX_RATE).quantize(Decimal(1), rounding=ROUND_FLOOR)
    return Totals(subtotal=subtotal, shipping_fee=shipping, tax=tax)


def _yen(value: Decimal) -> float:
    # The seed and AP2 carry yen as JSON floats (1980.0); amounts are exact in a float.
    return float(value)


def _amount(value: Decimal) -> dict[str, Any]:
    return {"value": _yen(value), "currency": CURRENCY}


def _utc(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def contact_address(address: dict[str, Any]) -> dict[str, Any]:
    """An AP2 ContactAddress (snake_case) from the agent's address, which may use W3C camelCase."""
    unknown = sorted(set(address) - set(ADDRESS_KEYS))
    if unknown:
        raise InvalidParams(
            f"shipping_address: unknown field(s) {', '.join(unknown)}",
            data={"unknown_fields": unknown, "allowed_fields": sorted(ADDRESS_KEYS)},
        )
    result: dict[str, Any] = {}
    for key, value in address.items():
        name = ADDRESS_KEYS[key]
        if name == "address_line":
            lines = [value] if isinstance(value, str) else value
            if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
                raise InvalidParams(f"shipping_address.{key} must be a string or a list of strings")
            result[name] = lines
        elif value is None or isinstance(value, str):
            result[name] = value
        else:
            raise InvalidParams(f"shipping_address.{key} must be a string")
    return result


def cart_lines(items: list[dict[str, int]]) -> list[CartLine]:
    """The cart's lines from the database, in the plan's order; quantities of a repeated id add up.

    Unknown or inactive products raise NotFound (404); quantities above stock raise Conflict (409).
    """
    quantities: dict[int, int] = {}
    for item in items:
        quantities[item["product_id"]] = quantities.get(item["product_id"], 0) + item["quantity"]
    products = products_for_cart(product_ids=quantities)
    unknown = [pk for pk in quantities if pk not in products]
    if unknown:
        raise NotFound(
            f"Unknown or unavailable product id(s): {', '.join(map(str, unknown))}",
            data={"unknown_product_ids": unknown},
        )
    short = [
        {
            "product_id": pk,
            "sku": products[pk].sku,
            "name": products[pk].name,
            "requested": qty,
            "available": products[pk].inventory_count,
        }
        for pk, qty in quantities.items()
        if qty > products[pk].inventory_count
    ]
    if short:
        names = ", ".join(f"{s['sku']} ({s['requested']} requested, {s['available']} in stock)" for s in short)
        raise Conflict(f"Not enough stock: {names}", data={"insufficient_stock": short})
    return [CartLine(products[pk], qty) for pk, qty in quantities.items()]


def price_warnings(lines: list[CartLine], agent_products: list[dict[str, Any]]) -> list[str]:
    """Where the agent's product data disagrees with the catalogue (the catalogue is used)."""
    by_id = {line.product.pk: line for line in lines}
    warnings = []
    for item in agent_products:
        product_id = item.get("id")
        line = by_id.get(product_id) if isinstance(product_id, int) else None
        if line is None:
            continue
        claimed = item.get("price_jpy")
        is_number = isinstance(claimed, int | float) and not isinstance(claimed, bool)
        if is_number and Decimal(str(claimed)) != line.unit_price:
            warnings.append(
                f"Product {line.product.pk}: price_jpy {claimed} from the agent ignored; "
                f"catalogue price {_yen(line.unit_price)} used"
            )
    return warnings


def canonical_json(value: Any) -> bytes:
    """RFC 8785-style canonical JSON: sorted keys, no whitespace, UTF-8, whole numbers without ".0"."""

    def canon(v):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, dict):
            return {k: canon(x) for k, x in v.items()}
        if isinstance(v, list):
            return [canon(x) for x in v]
        return v

    return json.dumps(canon(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def cart_hash(contents: dict[str, Any]) -> str:
    """Hex SHA-256 of the canonical JSON of the CartContents (what `merchant_authorization` signs)."""
    return hashlib.sha256(canonical_json(contents)).hexdigest()


@functools.lru_cache(maxsize=4)  # parsing a PEM costs ~40 ms (RSA): once per key, not per cart
def signing_key(secret: str):
    """(algorithm, key): a PEM private key signs with ES256/ES384/RS256/EdDSA, anything else is an HS256 secret."""
    if "-----BEGIN" not in secret:
        return "HS256", secret.encode()
    key = load_pem_private_key(secret.encode(), password=None)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {"secp256r1": "ES256", "secp384r1": "ES384"}[key.curve.name], key
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256", key
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA", key
    raise ValueError(f"Unsupported signing key type {type(key).__name__}")


def merchant_authorization(contents: dict[str, Any], *, now: datetime.datetime) -> str | None:
    """AP2's merchant JWT over the contents, or None (unsigned, as the seed) without MERCHANT_SIGNING_KEY."""
    if not settings.MERCHANT_SIGNING_KEY:
        return None
    algorithm, key = signing_key(settings.MERCHANT_SIGNING_KEY)
    payload = {
        "iss": settings.MERCHANT_ID,
        "sub": settings.MERCHANT_ID,
        "aud": JWT_AUDIENCE,
        "iat": int(now.timestamp()),
        "exp": int((now + datetime.timedelta(minutes=settings.CART_EXPIRY_MINUTES)).timestamp()),
        "jti": uuid.uuid4().hex,
        "cart_hash": cart_hash(contents),
    }
    return jwt.encode(payload, key, algorithm=algorithm, headers={"kid": settings.MERCHANT_ID})


def cart_mandate_build(
    *,
    items: list[dict[str, int]],
    shipping_address: dict[str, Any] | None = None,
    agent_products: list[dict[str, Any]] | None = None,
    now: datetime.datetime | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Build the CartMandate for a cart plan from catalogue data. Returns (cart_mandate, warnings)."""
    now = now or datetime.datetime.now(datetime.UTC)
    address = contact_address(shipping_address) if shipping_address is not None else None
    lines = cart_lines(items)
    totals = cart_totals(sum((line.total for line in lines), Decimal(0)))
    suffix = uuid.uuid4().hex[:16]

    seed_items = [
        {
            "label": line.product.name,
            "amount": _amount(line.total),
            "refund_period": line.product.refund_period_days * SECONDS_PER_DAY,  # the seed: seconds
        }
        for line in lines
    ]
    ap2_items = [
        # AP2's PaymentItem.refund_period is in days.
        {"label": line.product.name, "amount": _amount(line.total), "refund_period": line.product.refund_period_days}
        for line in lines
    ]
    ap2_items.append({"label": "送料", "amount": _amount(totals.shipping_fee), "refund_period": 0})
    ap2_items.append({"label": "消費税", "amount": _amount(totals.tax), "refund_period": 0})
    total_item = {"label": "合計", "amount": _amount(totals.total), "refund_period": 0}

    contents = {
        "id": f"cart_{suffix}",
        "merchant_id": settings.MERCHANT_ID,
        "display_items": seed_items,
        "total": _amount(totals.total),
        "metadata": {
            "raw_items": [
                {
                    "product_id": line.product.pk,
                    "sku": line.product.sku,
                    "name": line.product.name,
                    "quantity": line.quantity,
                    "unit_price_jpy": _yen(line.unit_price),
                    "total_price_jpy": _yen(line.total),
                }
                for line in lines
            ],
            "shipping_fee": _yen(totals.shipping_fee),
            "tax": _yen(totals.tax),
            "subtotal": _yen(totals.subtotal),
        },
        "shipping_address": shipping_address,
        # AP2 v0.1 CartContents
        "user_cart_confirmation_required": True,
        "payment_request": {
            "method_data": copy.deepcopy(METHOD_DATA),  # to_jsonable returns plain JSON as it is: never share it
            "details": {"id": f"order_{suffix}", "display_items": ap2_items, "total": total_item},
            "options": {"request_shipping": address is None},
            "shipping_address": address,
        },
        "cart_expiry": _utc(now + datetime.timedelta(minutes=settings.CART_EXPIRY_MINUTES)),
        "merchant_name": settings.MERCHANT_NAME,
    }
    contents = to_jsonable(contents)
    mandate = {
        "type": "CartMandate",
        "contents": contents,
        "merchant_authorization": merchant_authorization(contents, now=now),
        "created_at": _utc(now),
    }
    return mandate, price_warnings(lines, agent_products or [])
