"""MCP resources of the reminders group: the caller's calendar (events and reminders) as iCalendar."""

from __future__ import annotations

from django.conf import settings

from mcpsite.mcp.registry import CallContext
from mcpsite.mcp.resources import resource

from . import ical, services
from .tools import GROUP, owner_required


@resource(
    uri="mcpsite://reminders/calendar.ics",
    name="calendar",
    title="あなたのカレンダー (iCalendar)",
    group=GROUP,
    description="API キーの持ち主の予定 (90 日前以降) と有効なリマインダー (繰り返しは RRULE) を RFC 5545 で。",
    mime_type="text/calendar",
)
def calendar(ctx: CallContext) -> str:
    profile = services.profile_get_or_create(owner=owner_required(ctx))
    return ical.feed_build(profile=profile, site_url=settings.SITE_URL).decode()
