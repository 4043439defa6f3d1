"""Drill-down from a report line to the journal entries behind it (the journal entry list, filtered)."""

from __future__ import annotations

import datetime
from urllib.parse import urlencode

from django import template
from django.urls import reverse

register = template.Library()


@register.simple_tag
def entries_url(code: str, end: datetime.date, start: datetime.date | None = None) -> str:
    """The journal entries with a line on account `code` dated from `start` (from the first entry when None) to
    `end`, inclusive: what a balance-sheet, P&L or trial-balance line adds up."""
    params = {"account": code}
    if end < datetime.date.max:  # the last day there is has no day after it: no upper bound then
        params["date__lt"] = (end + datetime.timedelta(days=1)).isoformat()
    if start is not None:
        params["date__gte"] = start.isoformat()
    return f"{reverse('admin:ledger_journalentry_changelist')}?{urlencode(params)}"
