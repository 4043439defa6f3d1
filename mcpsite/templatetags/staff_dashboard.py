"""`{% staff_dashboard %}`: the admin index's dashboard (mcpsite/dashboard.py) for the logged-in staff member."""

from __future__ import annotations

from django import template
from django.utils import timezone

from mcpsite.dashboard import dashboard_build

register = template.Library()


def fiscal_year_param(value: str | None) -> int | None:
    """`?fiscal_year=2025` picks another year of the ledger block; anything else means the current year."""
    return int(value) if value and value.isascii() and value.isdigit() and 1900 <= int(value) <= 2999 else None


@register.inclusion_tag("admin/dashboard/dashboard.html", takes_context=True)
def staff_dashboard(context):
    request = context["request"]
    fiscal_year = fiscal_year_param(request.GET.get("fiscal_year"))
    return {"dashboard": dashboard_build(user=request.user, now=timezone.now(), fiscal_year=fiscal_year)}
