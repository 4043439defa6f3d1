"""MCP tools of the reminders group (seed: ../shared/seeds/innervoice-reminders-mcp.md).

Results are the seed's in-band shape: `{"status": "ok", "id": …}` or `{"status": "error", "error": …}`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from mcpsite.core.errors import ApplicationError, Forbidden, InvalidParams
from mcpsite.mcp.interaction import Confirmation
from mcpsite.mcp.registry import CallContext, tool

from . import schedule, selectors, services

GROUP = "reminders"
# The MCP Apps view of message.send's confirmation (docs/mcp-apps.md), registered in resources.py.
MESSAGE_CARD = "ui://reminders/message-card"

RESULT_SCHEMA = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["ok", "error"]},
        "id": {"type": "string"},
        "error": {"type": "string"},
    },
    "required": ["status"],
}


def render_error(exc: ApplicationError) -> dict[str, Any]:
    return {"status": "error", "error": exc.detail}


def owner_required(ctx: CallContext):
    """The caller's user (the API key's owner, or the stdio --user); InvalidParams when there is none."""
    if ctx.owner is None:
        raise InvalidParams(
            "An owner is required: call with an API key, or start the stdio server with --user <username>"
        )
    return ctx.owner


def _whole_minutes(value: int | float) -> int:
    if isinstance(value, float) and not value.is_integer():
        raise InvalidParams(f"duration_min must be a whole number of minutes (got {value})")
    return int(value)


@tool(
    name="calendar.create",
    title=_("Add a calendar event"),
    icon="📅",
    writes=True,
    annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
    description=(
        "予定を作成します。Create a calendar event. `start` is ISO 8601, extended or basic format "
        "(2025-09-19T07:00:00+09:00, 20250919T070000+0900): with an offset (or Z) the offset is kept; without one it "
        "is read in "
        f"{settings.TIME_ZONE}. `duration_min` is a whole number of minutes from 1 to "
        f"{settings.REMINDERS_MAX_DURATION_MIN}. Returns the event id (evt_…)."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "予定タイトル（必須）"},
            "start": {"type": "string", "description": "ISO8601形式の開始時刻（必須）"},
            "duration_min": {"type": "number", "description": "所要時間（分）（必須）"},
            "description": {"type": "string", "description": "説明（オプション）"},
            "location": {"type": "string", "description": "場所（オプション）"},
        },
        "required": ["title", "start", "duration_min"],
    },
    output_schema=RESULT_SCHEMA,
    render_error=render_error,
)
def calendar_create(args: dict, ctx: CallContext) -> dict:
    """Create an event for the key's owner."""
    owner = owner_required(ctx)
    start, tz = schedule.parse_when(args["start"], field="start")
    event = services.event_create(
        owner=owner,
        title=args["title"],
        start=start,
        tz=tz,
        duration_min=_whole_minutes(args["duration_min"]),
        description=args.get("description"),
        location=args.get("location"),
    )
    return {"status": "ok", "id": event.public_id}


@tool(
    name="message.send",
    title=_("Send a message"),
    icon="✉️",
    writes=True,
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True},
    description=(
        "メッセージを送信します。Send a message to one of your contacts. `to` is the contact's name "
        "or id (ct_…); an ambiguous or unknown name is an error listing the candidates. `platform` is "
        "'email' or 'sms' (default: the contact's preferred platform). The message is queued and "
        "delivered in the background; returns the message id (msg_…)."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "to": {"type": "string", "description": "送信先（名前またはID）（必須）"},
            "text": {"type": "string", "description": "メッセージ本文（必須）"},
            "platform": {
                "type": "string",
                "enum": ["sms", "email"],
                "description": 'プラットフォーム指定（オプション: "sms", "email"）',
            },
        },
        "required": ["to", "text"],
    },
    output_schema=RESULT_SCHEMA,
    render_error=render_error,
    confirm=True,
    ui=MESSAGE_CARD,
)
def message_send(args: dict, ctx: CallContext) -> dict:
    """Queue a message to one of the owner's contacts; first ask the user, when the client can show the question.

    A message cannot be taken back once delivered, so a client that declares elicitation gets the recipient, the
    address and the text to confirm; a decline or cancel stores nothing. Other clients get the seed's behaviour.
    One confirmation sends one message, however often the confirmed request is repeated. A client with MCP Apps
    gets the question as a card in its view instead (Send calls `message.confirm_send`).
    """
    draft = services.message_prepare(
        owner=owner_required(ctx), to=args["to"], text=args["text"], platform=args.get("platform")
    )
    if ctx.interaction.can_confirm():
        answer = ctx.interaction.confirm(_confirmation_text(draft), _card(draft))
        if answer != Confirmation.ACCEPT:
            # This very question was accepted earlier (the client presents its state again with another answer):
            # the message was sent then, and a later answer cannot take it back.
            if (
                sent := selectors.message_confirmed(owner=draft.owner, key=ctx.interaction.confirmation_key)
            ) is not None:
                return {"status": "ok", "id": sent.public_id}
            verb = "declined" if answer == Confirmation.DECLINE else "cancelled"
            raise NotConfirmed(data=f"Not sent: the user {verb} sending this message to {draft.contact.name}")
    message = services.message_send_draft(draft=draft, confirmation_key=ctx.interaction.confirmation_key)
    return {"status": "ok", "id": message.public_id}


@tool(
    name="message.confirm_send",
    title=_("Confirm and send a message"),
    icon="📨",
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": True},
    description=(
        "メッセージカードの「送信」。Send the message the person confirmed on message.send's card (MCP Apps view "
        "only: hosts do not offer this tool to the model). `confirmation` is the card's sealed token; one card "
        "sends one message."
    ),
    input_schema={
        "type": "object",
        "properties": {"confirmation": {"type": "string", "description": "カードの確認トークン"}},
        "required": ["confirmation"],
    },
    output_schema=RESULT_SCHEMA,
    render_error=render_error,
    confirm=True,
    ui=MESSAGE_CARD,
    app_only=True,
)
def message_confirm_send(args: dict, ctx: CallContext) -> dict:
    """message.send with the arguments sealed in the card the person accepted; sends only what the card showed."""
    return message_send(ctx.interaction.confirmed_in_view(args["confirmation"], tool="message.send"), ctx)


class NotConfirmed(Forbidden):
    message = "Not confirmed"


def _card(draft: services.MessageDraft) -> dict[str, str]:
    """What the message card shows, by field (the confirmation text says the same)."""
    return {
        "recipient": draft.contact.name,
        "contact_id": draft.contact.public_id,
        "platform": draft.platform,
        "address": draft.address,
        "text": draft.text,
    }


def _confirmation_text(draft: services.MessageDraft) -> str:
    platform = "メール" if draft.platform == "email" else "SMS"
    return (
        f"{draft.contact.name} ({draft.contact.public_id}) に{platform} ({draft.address}) で"
        "次のメッセージを送信しますか？"
        f"\nSend this message to {draft.contact.name} by {draft.platform}?\n\n{draft.text}"
    )


@tool(
    name="reminder.create",
    title=_("Set a reminder"),
    icon="⏰",
    writes=True,
    annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": True},
    description=(
        "リマインダーを作成します。Create a reminder. `time` is ISO 8601 (extended or basic format, as "
        "calendar.create's `start`) and must be in the future "
        f"(without an offset it is read in {settings.TIME_ZONE}). `repeat` is optional: {schedule.REPEAT_WORDS_TEXT}, "
        "or RFC 5545 RRULE text such as FREQ=WEEKLY;BYDAY=MO,WE (at most hourly). "
        "Reminders are delivered by email to you, or to your webhook if one is set. Returns the id (rem_…)."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "time": {"type": "string", "description": "ISO8601形式の通知時刻（必須）"},
            "note": {"type": "string", "description": "リマインダーの内容（必須）"},
            "repeat": {"type": "string", "description": "繰り返し設定（オプション）"},
        },
        "required": ["time", "note"],
    },
    output_schema=RESULT_SCHEMA,
    render_error=render_error,
)
def reminder_create(args: dict, ctx: CallContext) -> dict:
    """Create a (possibly repeating) reminder for the key's owner."""
    owner = owner_required(ctx)
    time, tz = schedule.parse_when(args["time"], field="time")
    reminder = services.reminder_create(owner=owner, time=time, tz=tz, note=args["note"], repeat=args.get("repeat"))
    return {"status": "ok", "id": reminder.public_id}
