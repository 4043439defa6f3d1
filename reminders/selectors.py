"""Reads: contact lookup and the calendar feed. (The due-work pickers lock rows: they are in services.py.)"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rapidfuzz import fuzz, process

from mcpsite.core.text import name_key

from .models import Contact, Event, Message, Profile, Reminder, ReminderDelivery

if TYPE_CHECKING:
    from django.contrib.auth.models import User

CANDIDATES_SHOWN = 5


@dataclass(frozen=True)
class ContactMatch:
    contact: Contact | None
    candidates: list[Contact]
    ambiguous: bool = False


def contact_find(*, owner: User, to: str) -> ContactMatch:
    """The owner's contact identified by `to`: its id, or its whole name (width, case, kana and spaces folded).

    Nothing less picks a recipient: a message cannot be taken back, and a fragment ("a", "子") names no one in
    particular. Otherwise the result has no contact and lists the candidates: every contact with that name
    (ambiguous), else the names that contain `to`, else the closest names.
    """
    contacts = list(Contact.objects.filter(owner=owner).order_by("name", "pk"))
    wanted = to.strip()
    by_id = [c for c in contacts if c.public_id == wanted]
    if by_id:
        return ContactMatch(by_id[0], [])
    key = name_key(wanted)  # 'ｔａｒｏ', 'Taro', 'たろう'/'タロウ' meet; so do '山田　花子' and '山田花子'
    names = {c.pk: name_key(c.name) for c in contacts}
    exact = [c for c in contacts if names[c.pk] == key]
    if len(exact) == 1:
        return ContactMatch(exact[0], [])
    if exact:
        return ContactMatch(None, exact, ambiguous=True)
    partial = [c for c in contacts if key and key in names[c.pk]]
    if partial:
        return ContactMatch(None, partial[:CANDIDATES_SHOWN])
    close = process.extract(key, names, scorer=fuzz.WRatio, limit=CANDIDATES_SHOWN, score_cutoff=50)
    by_pk = {c.pk: c for c in contacts}
    return ContactMatch(None, [by_pk[pk] for _name, _score, pk in close])


def message_confirmed(*, owner: User, key: str | None) -> Message | None:
    """The message the owner's confirmation `key` sent (MCP 2026-07-28 round trip or Apps card), if any."""
    return None if key is None else Message.objects.filter(confirmation_key=key, owner=owner).first()


def feed_profile(*, token: str) -> Profile | None:
    return Profile.objects.select_related("owner").filter(feed_token=token).first()


def feed_events(*, owner: User, since: datetime.datetime, limit: int) -> list[Event]:
    return list(Event.objects.filter(owner=owner, start__gte=since).order_by("start", "pk")[:limit])


def feed_reminders(*, owner: User, limit: int) -> list[Reminder]:
    return list(
        Reminder.objects.filter(owner=owner, is_active=True, next_fire_at__isnull=False).order_by("next_fire_at")[
            :limit
        ]
    )


# --- the staff dashboard ----------------------------------------------------------------------


@dataclass(frozen=True)
class DeliveryHealth:
    due: int  # active reminders whose next occurrence falls in [start, end)
    failed_messages: int  # messages that failed since `failed_since`
    failed_deliveries: int  # reminder occurrences whose delivery failed since `failed_since`


def delivery_health(
    *, start: datetime.datetime, end: datetime.datetime, failed_since: datetime.datetime
) -> DeliveryHealth:
    """Reminders due in [start, end) and failures since `failed_since`: three COUNT queries."""
    return DeliveryHealth(
        due=Reminder.objects.filter(is_active=True, next_fire_at__gte=start, next_fire_at__lt=end).count(),
        failed_messages=Message.objects.filter(status=Message.Status.FAILED, created_at__gte=failed_since).count(),
        failed_deliveries=ReminderDelivery.objects.filter(
            status=ReminderDelivery.Status.FAILED, delivered_at__gte=failed_since
        ).count(),
    )
