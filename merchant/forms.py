"""The staff form for a stock change."""

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from .models import InventoryMovement


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
