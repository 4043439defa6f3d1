"""Reminders and deliveries on the staff dashboard (mcpsite/dashboard.py)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.utils.translation import gettext

from mcpsite.dashboard import Block, Link, Viewer, changelist, iso, local_midnight, number

from . import selectors

FAILURE_DAYS = 7


@dataclass(frozen=True, slots=True)
class RemindersBlock:
    due_today: Link | None
    failed_messages: Link | None
    failed_deliveries: Link | None
    failure_days: int = FAILURE_DAYS


def reminders_block(viewer: Viewer) -> Block | None:
    may = viewer.user.has_perm
    if not any(may(f"reminders.view_{m}") for m in ("reminder", "message", "reminderdelivery")):
        return None
    today = viewer.today
    start, end = local_midnight(today), local_midnight(today + datetime.timedelta(days=1))
    since = local_midnight(today - datetime.timedelta(days=FAILURE_DAYS - 1))
    health = selectors.delivery_health(start=start, end=end, failed_since=since)
    due = Link(
        number(health.due),
        changelist("reminders.reminder", is_active__exact=1, next_fire_at__gte=iso(start), next_fire_at__lt=iso(end)),
        health.due,
    )
    messages = Link(
        number(health.failed_messages),
        changelist("reminders.message", status__exact="failed", created_at__gte=iso(since)),
        health.failed_messages,
    )
    deliveries = Link(
        number(health.failed_deliveries),
        changelist("reminders.reminderdelivery", status__exact="failed", delivered_at__gte=iso(since)),
        health.failed_deliveries,
    )
    data = RemindersBlock(
        due_today=due if may("reminders.view_reminder") else None,
        failed_messages=messages if may("reminders.view_message") else None,
        failed_deliveries=deliveries if may("reminders.view_reminderdelivery") else None,
    )
    return Block("dash-reminders", gettext("Reminders and deliveries"), "admin/dashboard/reminders_health.html", data)
