"""`{% staff_dashboard %}`: the admin index's dashboard (mcpsite/dashboard.py) for the logged-in staff member."""

from __future__ import annotations

from django import template
from django.utils import timezone

from mcpsite.dashboard import dashboard_build

register = template.Library()


@register.inclusion_tag("admin/dashboard/dashboard.html", takes_context=True)
def staff_dashboard(context):
    request = context["request"]
    return {"dashboard": dashboard_build(user=request.user, now=timezone.now(), params=request.GET)}
