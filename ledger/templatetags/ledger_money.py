"""`{{ amount|yen }}`: 430000 -> 430,000 (two decimals only when there are cents)."""

from decimal import Decimal

from django import template

from ledger.services import yen as format_yen

register = template.Library()


@register.filter
def yen(value) -> str:
    return format_yen(Decimal(value))


@register.filter
def yen_abs(value) -> str:
    return format_yen(abs(Decimal(value)))
