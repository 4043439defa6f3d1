"""The staff forms: a product (its price in yen) and a stock change."""

from decimal import Decimal

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from .models import InventoryMovement, Product

CENTS_PER_YEN = 100
# The largest price the stored 1/100 yen can hold (a PositiveBigIntegerField on every database).
MAX_PRICE_YEN = Decimal(2**63 - 1) // CENTS_PER_YEN


def yen_text(cents: int) -> str:
    """A stored price as staff read it: ¥1,980 (¥1,980.50 when it has a fraction of a yen)."""
    yen = Decimal(cents) / CENTS_PER_YEN
    return f"¥{yen:,.0f}" if cents % CENTS_PER_YEN == 0 else f"¥{yen:,.2f}"


class ProductForm(forms.ModelForm):
    """A product with its price entered in yen (1980 for ¥1,980), stored as the seed's 1/100 yen (198000)."""

    price = forms.DecimalField(
        label=_("price (yen)"),
        min_value=0,
        max_value=MAX_PRICE_YEN,
        decimal_places=2,
        help_text=_("In yen: 1980 for ¥1,980 (at most two decimal places)."),
    )

    class Meta:
        model = Product
        fields = [  # the admin's fields, the price in yen (`price`) in place of the stored price_cents
            "sku", "name", "description", "inventory_count", "category", "brand", "image_url", "refund_period_days",
            "keywords", "active",
        ]  # fmt: skip

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.initial.setdefault("price", Decimal(self.instance.price_cents) / CENTS_PER_YEN)

    def save(self, commit=True):
        self.instance.price_cents = int(self.cleaned_data["price"] * CENTS_PER_YEN)
        return super().save(commit)


class StockAdjustmentForm(forms.Form):
    reason = forms.ChoiceField(
        label=_("reason"), choices=InventoryMovement.Reason.choices, initial=InventoryMovement.Reason.RESTOCK
    )
    quantity = forms.IntegerField(
        label=_("quantity"),
        min_value=0,
        max_value=1_000_000,
        help_text=_("Sale / restock: how many units leave or arrive. Correction: the counted stock."),
    )
    note = forms.CharField(label=_("note"), max_length=200, required=False)

    def clean(self):
        super().clean()
        data = self.cleaned_data
        if data.get("reason") != InventoryMovement.Reason.CORRECTION and data.get("quantity") == 0:
            self.add_error("quantity", gettext("A sale or restock moves at least one unit."))
        return data
