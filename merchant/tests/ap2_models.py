"""AP2 v0.1 types, written from the public spec (google-agentic-commerce/AP2 src/ap2/types).

Strict where AP2's own fields are concerned (`extra="forbid"` inside PaymentRequest) so a misspelt
field fails; CartContents and CartMandate allow extra fields because the seed's fields
(merchant_id, display_items, total, metadata, created_at …) travel in the same object.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


class ContactAddress(Strict):
    city: str | None = None
    country: str | None = None
    dependent_locality: str | None = None
    organization: str | None = None
    phone_number: str | None = None
    postal_code: str | None = None
    recipient: str | None = None
    region: str | None = None
    sorting_code: str | None = None
    address_line: list[str] | None = None


class PaymentCurrencyAmount(Strict):
    currency: str
    value: float


class PaymentItem(Strict):
    label: str
    amount: PaymentCurrencyAmount
    pending: bool | None = None
    refund_period: int = 30  # days


class PaymentShippingOption(Strict):
    id: str
    label: str
    amount: PaymentCurrencyAmount
    selected: bool | None = False


class PaymentOptions(Strict):
    request_payer_name: bool | None = False
    request_payer_email: bool | None = False
    request_payer_phone: bool | None = False
    request_shipping: bool | None = True
    shipping_type: str | None = None


class PaymentMethodData(Strict):
    supported_methods: str
    data: dict[str, Any] | None = None


class PaymentDetailsModifier(Strict):
    supported_methods: str
    total: PaymentItem | None = None
    additional_display_items: list[PaymentItem] | None = None
    data: dict[str, Any] | None = None


class PaymentDetailsInit(Strict):
    id: str
    display_items: list[PaymentItem]
    shipping_options: list[PaymentShippingOption] | None = None
    modifiers: list[PaymentDetailsModifier] | None = None
    total: PaymentItem


class PaymentRequest(Strict):
    method_data: list[PaymentMethodData]
    details: PaymentDetailsInit
    options: PaymentOptions | None = None
    shipping_address: ContactAddress | None = None


class CartContents(BaseModel):
    id: str
    user_cart_confirmation_required: bool
    payment_request: PaymentRequest
    cart_expiry: str
    merchant_name: str


class CartMandate(BaseModel):
    contents: CartContents
    merchant_authorization: str | None = None
