"""MCP resources of the reminders group: the caller's calendar (events and reminders) as iCalendar, and the message
card view."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from mcpsite.mcp.registry import CallContext
from mcpsite.mcp.resources import resource
from mcpsite.mcp.ui import view

from . import ical, services
from .tools import GROUP, MESSAGE_CARD, owner_required


@resource(
    uri="mcpsite://reminders/calendar.ics",
    name="calendar",
    title="あなたのカレンダー (iCalendar)",
    description="API キーの持ち主の予定 (90 日前以降) と有効なリマインダー (繰り返しは RRULE) を RFC 5545 で。",
    mime_type="text/calendar",
)
def calendar(ctx: CallContext) -> str:
    profile = services.profile_get_or_create(owner=owner_required(ctx))
    return ical.feed_build(profile=profile, site_url=settings.SITE_URL).decode()


view(
    uri=MESSAGE_CARD,
    group=GROUP,
    name="message-card",
    title="メッセージ送信の確認 / Message card",
    description=(
        "MCP Apps view of message.send's confirmation: recipient, platform, address and text, with Send (the "
        "app-only message.confirm_send) and Cancel (nothing is sent)."
    ),
    path=Path(__file__).parent / "ui" / "message_card.html",
)
