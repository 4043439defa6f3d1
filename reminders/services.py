"""Writes: events, messages and reminders, and their delivery.

Delivery is at-least-once made exactly-once where it can be: a worker claims due work under a row
lock (SKIP LOCKED, so two workers split it) and takes a lease; the send happens outside any
transaction; the outcome is recorded, and a repeating reminder's next occurrence scheduled, in one
transaction that re-checks the lease. A worker that dies mid-delivery never records, so its lease
expires and the sweeper picks the occurrence up again. Receivers get a stable idempotency key
(`Message-ID` header, `Idempotency-Key` header) for the one window no database can close: a crash
after the send and before the record.
"""

from __future__ import annotations

import datetime
import functools
import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import requests
from django.conf import settings
from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_noop

from mcpsite.core import metrics
from mcpsite.core.db import durable
from mcpsite.core.errors import Conflict, InvalidParams
from mcpsite.core.errors import Message as Text
from mcpsite.core.text import trimmed, url_origin

from . import schedule, selectors, sms
from .models import Contact, Event, Message, Platform, Profile, Reminder, ReminderDelivery, new_feed_token
from .webhooks import REFUSED, WebhookTargetRefused, webhook_post

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger("reminders")

TITLE_MAX = 200
DESCRIPTION_MAX = 2000
LOCATION_MAX = 200
NOTE_MAX = 1000
TEXT_MAX = {Platform.EMAIL: 10_000, Platform.SMS: 1_600}  # 1,600: ten concatenated SMS segments
REMINDER_BATCH = 50
REMINDER_MAX_ATTEMPTS = 3
WEBHOOK_TIMEOUT_S = (3.05, 10)


# A claim's lease: longer than any single send may take (the webhook timeout is 13 s, SMTP's is similar).
LEASE = datetime.timedelta(minutes=5)
LATE_AFTER = datetime.timedelta(minutes=2)  # a reminder delivered later than this after its time is marked late


def _text(value: str | None, *, field: str, limit: int, required: bool = False) -> str:
    blank = f"{field} is required and must not be blank" if required else None
    return trimmed(
        value, limit=limit, blank=blank, too_long=f"{field} is too long: {{length}} characters (at most {{limit}})"
    )


# --- events ------------------------------------------------------------------------------------


def event_create(
    *,
    owner: User,
    title: str,
    start: datetime.datetime,
    tz: str,
    duration_min: int,
    description: str | None = None,
    location: str | None = None,
) -> Event:
    """Create a calendar event; `start` is aware and `tz` the zone it was written in."""
    cap = settings.REMINDERS_MAX_DURATION_MIN
    if duration_min <= 0 or duration_min > cap:
        raise InvalidParams(f"duration_min must be a whole number of minutes from 1 to {cap} (got {duration_min})")
    event = Event(
        owner=owner,
        title=_text(title, field="title", limit=TITLE_MAX, required=True),
        start=start,
        tz=tz,
        duration_min=duration_min,
        description=_text(description, field="description", limit=DESCRIPTION_MAX),
        location=_text(location, field="location", limit=LOCATION_MAX),
    )
    with durable():
        event.save()
    return event


# --- messages ----------------------------------------------------------------------------------


def _describe(contacts: list[Contact]) -> str:
    return ", ".join(f"{c.name} ({c.public_id})" for c in contacts)


@dataclass(frozen=True)
class MessageDraft:
    """A message checked and addressed, not yet stored: what a confirmation shows and `message_send_draft` sends."""

    owner: User
    contact: Contact
    platform: str
    address: str
    text: str


def message_prepare(*, owner: User, to: str, text: str, platform: str | None = None) -> MessageDraft:
    """Find the recipient among the owner's contacts and check the text; InvalidParams naming the problem."""
    wanted = _text(to, field="to", limit=200, required=True)
    match = selectors.contact_find(owner=owner, to=wanted)
    if match.contact is None:
        if match.ambiguous:
            raise InvalidParams(f"to '{wanted}' matches several contacts: {_describe(match.candidates)}; use the id")
        if match.candidates:
            raise InvalidParams(
                f"No contact matches '{wanted}'. Did you mean: {_describe(match.candidates)}? "
                "Give the whole name or the id"
            )
        raise InvalidParams(f"No contact matches '{wanted}' (no contact has a similar name)")
    contact = match.contact
    chosen = platform or contact.preferred_platform
    address = contact.address(chosen)
    if not address:
        kind = "email address" if chosen == Platform.EMAIL else "phone number"
        raise InvalidParams(f"Contact {contact.name} ({contact.public_id}) has no {kind} for platform {chosen!r}")
    if chosen == Platform.SMS and not sms.is_configured():
        raise InvalidParams("SMS is not configured on this server (no SMS provider); send with platform 'email'")
    body = _text(text, field="text", limit=TEXT_MAX[Platform(chosen)], required=True)
    return MessageDraft(owner=owner, contact=contact, platform=chosen, address=address, text=body)


def message_send_draft(*, draft: MessageDraft, confirmation_key: str | None = None) -> Message:
    """Store the drafted message; a task delivers it after commit.

    `confirmation_key` names the user's confirmation (MCP 2026-07-28 round trip). A confirmation sends once: the
    key is unique on the message, so a request repeated with the same confirmation, even concurrently or on
    another host, returns the message it sent.
    """
    if (sent := selectors.message_confirmed(owner=draft.owner, key=confirmation_key)) is not None:
        return sent
    try:
        with durable():
            message = Message.objects.create(
                owner=draft.owner,
                contact=draft.contact,
                platform=draft.platform,
                address=draft.address,
                text=draft.text,
                confirmation_key=confirmation_key,
            )
            transaction.on_commit(lambda: _enqueue_message(message.pk))
    except IntegrityError:
        # A concurrent repeat of the same confirmation committed first (the unique key waited for it).
        if (sent := selectors.message_confirmed(owner=draft.owner, key=confirmation_key)) is None:
            raise
        return sent
    return message


def message_send(*, owner: User, to: str, text: str, platform: str | None = None) -> Message:
    """Store a message to one of the owner's contacts; a task delivers it after commit."""
    return message_send_draft(draft=message_prepare(owner=owner, to=to, text=text, platform=platform))


def _enqueue_message(message_id: int) -> None:
    from .tasks import deliver_message

    deliver_message.enqueue(message_id=message_id)


def message_id_header(*, message: Message) -> str:
    """The message's `Message-ID`: one per message, whatever attempt sends it, so a recipient whose mail arrives
    twice (a worker that died after the send and before recording it) can drop the copy."""
    return f"<{message.public_id}@mcpsite>"


def _send_message(message: Message) -> None:
    if message.platform == Platform.SMS:
        sms.send_sms(to=message.address, text=message.text)
        return
    sender = message.owner.get_full_name() or message.owner.get_username()
    EmailMessage(
        subject=f"Message from {sender}",
        body=message.text,
        to=[message.address],
        reply_to=[message.owner.email] if message.owner.email else None,
        headers={"Message-ID": message_id_header(message=message)},
    ).send()


def message_deliver(*, message_id: int, now: datetime.datetime | None = None) -> str | None:
    """Send one queued message (the task's body). Returns its final status, or None if not ours to send."""
    now = now or timezone.now()
    with durable():
        # lock: the message alone (OF self), so a duplicate task or the sweeper cannot send it a second time; the
        # owner's row is only read: a concurrent write to it must not make SKIP LOCKED pass the message by
        message = (
            Message.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("owner")
            .filter(pk=message_id)
            .first()
        )
        if message is None:
            return None
        claimable = message.status == Message.Status.QUEUED or (
            message.status == Message.Status.SENDING and message.claimed_until and message.claimed_until < now
        )
        if not claimable:
            return None
        message.status = Message.Status.SENDING
        message.claimed_until = now + LEASE
        message.attempts += 1
        message.save(update_fields=["status", "claimed_until", "attempts"])
    update: dict[str, Any]
    try:
        _send_message(message)
    except Exception as exc:  # any provider failure is recorded for staff, not raised into the worker
        logger.warning("Message %s failed: %s", message.public_id, exc)
        reason = str(exc) if isinstance(exc, sms.SmsError) else f"{type(exc).__name__}: {exc}"
        update = {"status": Message.Status.FAILED, "failure_reason": reason[:1000] or type(exc).__name__}
    else:
        update = {"status": Message.Status.SENT, "sent_at": timezone.now(), "failure_reason": ""}
    with durable():
        Message.objects.filter(pk=message.pk, status=Message.Status.SENDING).update(claimed_until=None, **update)
    metrics.delivery(channel=message.platform, outcome=update["status"])
    return update["status"]


def message_resend(*, message: Message) -> Message:
    """Queue a failed message again (the admin's resend action)."""
    with durable():
        # lock: the message, so a resend cannot race its own delivery
        locked = Message.objects.select_for_update().get(pk=message.pk)
        if locked.status != Message.Status.FAILED:
            raise Conflict(
                Text(
                    gettext_noop("Message %(id)s is %(status)s; only failed messages can be resent"),
                    id=locked.public_id,
                    status=Text(locked.status),  # the status's label on a staff page
                )
            )
        locked.status = Message.Status.QUEUED
        locked.failure_reason = ""
        locked.claimed_until = None
        locked.save(update_fields=["status", "failure_reason", "claimed_until"])
        transaction.on_commit(lambda: _enqueue_message(locked.pk))
    return locked


# Pickers of due work. They lock rows, so they are services' (a selector only reads).


def _reminders_due_locked(*, now: datetime.datetime, limit: int) -> QuerySet[Reminder]:
    """Due occurrences no live worker holds, locked for the caller's transaction.

    SKIP LOCKED lets two workers split the due set instead of queueing behind each other.
    """
    return (
        Reminder.objects.filter(is_active=True, next_fire_at__lte=now)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .order_by("next_fire_at", "pk")
        .select_for_update(skip_locked=True)[:limit]
    )


def _messages_stalled_locked(
    *, now: datetime.datetime, queued_before: datetime.datetime, limit: int
) -> QuerySet[Message, int]:
    """Messages whose delivery was lost (a dead worker's lease expired, or their task never ran)."""
    return (
        Message.objects.filter(
            Q(status=Message.Status.SENDING, claimed_until__lt=now)
            | Q(status=Message.Status.QUEUED, created_at__lt=queued_before)
        )
        .order_by("created_at", "pk")
        .select_for_update(skip_locked=True)
        .values_list("pk", flat=True)[:limit]
    )


def messages_requeue_stalled(*, now: datetime.datetime | None = None, limit: int = 100) -> int:
    """Re-enqueue messages a dead worker left `sending`, or whose task never ran."""
    now = now or timezone.now()
    with durable():
        # lock: the stalled rows, so two sweepers do not enqueue each one twice
        ids = list(_messages_stalled_locked(now=now, queued_before=now - LEASE, limit=limit))
        for message_id in ids:
            transaction.on_commit(functools.partial(_enqueue_message, message_id))
    return len(ids)


# --- reminders ---------------------------------------------------------------------------------


def profile_get_or_create(*, owner: User) -> Profile:
    profile, _created = Profile.objects.get_or_create(owner=owner)
    return profile


def profile_rotate_feed_token(*, profile: Profile) -> Profile:
    """Give the owner's calendar feed a new secret URL; the old one stops working at once."""
    with durable():
        profile.feed_token = new_feed_token()
        profile.feed_token_rotated_at = timezone.now()
        profile.save(update_fields=["feed_token", "feed_token_rotated_at"])
    return profile


def reminder_create(
    *,
    owner: User,
    time: datetime.datetime,
    tz: str,
    note: str,
    repeat: str | None = None,
    now: datetime.datetime | None = None,
) -> Reminder:
    """Create a reminder at `time` (aware; `tz` is the zone it was written in), optionally repeating."""
    now = now or timezone.now()
    if time <= now:
        current = now.astimezone(time.tzinfo).isoformat(timespec="seconds")
        raise InvalidParams(f"time {time.isoformat()} is in the past (now is {current}); it must be in the future")
    body = _text(note, field="note", limit=NOTE_MAX, required=True)
    rule_text = schedule.parse_repeat(repeat, first=time) if repeat is not None else ""
    if not owner.email and not Profile.objects.filter(owner=owner).exclude(webhook_url="").exists():
        raise InvalidParams("Your account has no email address or webhook URL to deliver reminders to")
    with durable():
        reminder = Reminder.objects.create(
            owner=owner, note=body, time=time, tz=tz, repeat=(repeat or "").strip(), rrule=rule_text, next_fire_at=time
        )
        transaction.on_commit(lambda: reminder_sweep_enqueue(at=time))
    return reminder


def reminder_sweep_enqueue(*, at: datetime.datetime | None = None) -> None:
    """Wake a worker at `at` (now when None) to deliver whatever is due then."""
    from .tasks import deliver_due_reminders

    task = deliver_due_reminders if at is None else deliver_due_reminders.using(run_after=at)
    task.enqueue()


def reminder_sweep_ensure() -> bool:
    """Enqueue a sweep unless one is already waiting for a worker (the scheduler's tick).

    This is what recovers leases of workers that died: their occurrences become due again and
    only a later sweep can see that.
    """
    from django_tasks_db.backend import DatabaseBackend
    from django_tasks_db.models import DBTaskResult

    from .tasks import deliver_due_reminders

    if isinstance(deliver_due_reminders.get_backend(), DatabaseBackend):
        waiting = DBTaskResult.objects.ready().filter(task_path=deliver_due_reminders.module_path)
        if waiting.exists():
            return False
    reminder_sweep_enqueue()
    return True


@dataclass(frozen=True)
class Claim:
    reminder_id: int
    occurrence: datetime.datetime
    token: str


def _reminders_claim(*, worker: str, now: datetime.datetime, batch: int) -> list[Claim]:
    token = f"{worker[:40]}/{uuid.uuid4().hex[:12]}"
    with durable():
        due = list(_reminders_due_locked(now=now, limit=batch))
        if not due:
            return []
        Reminder.objects.filter(pk__in=[r.pk for r in due]).update(claimed_until=now + LEASE, claimed_by=token)
    metrics.REMINDERS_DUE.inc(len(due))
    return [Claim(r.pk, r.next_fire_at, token) for r in due if r.next_fire_at is not None]  # due: all have one


def _idempotency_key(reminder: Reminder, occurrence: datetime.datetime) -> str:
    return f"{reminder.public_id}.{occurrence.astimezone(datetime.UTC):%Y%m%dT%H%M%SZ}"


def _send_reminder(reminder: Reminder, occurrence: datetime.datetime, late: bool, webhook_url: str) -> None:
    """Deliver one occurrence to the webhook when there is one, else by email. Raises on failure."""
    local = occurrence.astimezone(reminder.zone)
    key = _idempotency_key(reminder, occurrence)
    if webhook_url:
        payload = {
            "type": "reminder",
            "id": reminder.public_id,
            "note": reminder.note,
            "time": local.isoformat(),
            "late": late,
            "repeat": reminder.repeat or None,
            "delivery_key": key,
        }
        response = webhook_post(
            webhook_url,
            json=payload,
            timeout=WEBHOOK_TIMEOUT_S,
            headers={"Idempotency-Key": key, "User-Agent": "mcpsite-reminders/1"},
        )
        if response.status_code >= 300:
            raise RuntimeError(f"webhook answered HTTP {response.status_code}")
        return
    if not reminder.owner.email:
        raise RuntimeError("the owner has no email address or webhook URL")
    late_note = " (late: the reminder service was unavailable at this time)" if late else ""
    EmailMessage(
        subject=f"Reminder: {reminder.note[:60]}",
        body=f"{reminder.note}\n\n{local:%Y-%m-%d %H:%M} ({reminder.tz}){late_note}\n",
        to=[reminder.owner.email],
        headers={"Message-ID": f"<{key}@mcpsite>"},
    ).send()


def webhook_origin(*, url: str) -> str:
    """scheme://host[:port] of a webhook URL: its credentials, path and query may be secrets."""
    return url_origin(url)


def _failure_reason(exc: Exception, webhook_url: str) -> str:
    """The text recorded on a failed delivery (shown in the admin). A webhook failure says only whether the target
    was refused: "connection refused" against "timed out" against "answered HTTP 404" would make the webhook a port
    scanner for whoever may set its URL. The details go to the server log (`_failure_detail`)."""
    if webhook_url:
        if isinstance(exc, WebhookTargetRefused):
            return f"the webhook URL was refused: {REFUSED}"
        return "the webhook did not accept the delivery (details in the server log)"
    return _failure_detail(exc, webhook_url)


def _failure_detail(exc: Exception, webhook_url: str) -> str:
    """The text logged for a failed delivery, without the webhook URL's secrets.

    requests' messages quote the URL ("Max retries exceeded with url: /hook/<token>", "No connection
    adapters were found for '<url>'"); the delivery row is shown in the admin and logs are shared.
    """
    if webhook_url and isinstance(exc, requests.RequestException):
        return f"{type(exc).__name__}: the webhook at {webhook_origin(url=webhook_url)} could not be reached"
    text = f"{type(exc).__name__}: {exc}"
    if webhook_url:
        text = text.replace(webhook_url, webhook_origin(url=webhook_url))
    return text


def _delivery_observed(channel: str, status: str, *, lag: datetime.timedelta) -> None:
    metrics.delivery(channel=f"reminder-{channel}", outcome=status)
    metrics.REMINDER_LAG_SECONDS.observe(max(lag.total_seconds(), 0.0))


def _reminder_finish(claim: Claim, *, channel: str, error: str, now: datetime.datetime, late: bool) -> bool:
    """Record the occurrence and schedule the next one, in one transaction. False if the lease was lost."""
    with durable():
        # lock: the reminder, so recording this occurrence and moving to the next is one step
        reminder = Reminder.objects.select_for_update().get(pk=claim.reminder_id)
        if reminder.claimed_by != claim.token or reminder.next_fire_at != claim.occurrence:
            logger.warning("Lost the lease on %s before recording its delivery", reminder.public_id)
            return False
        if error and reminder.attempts + 1 < REMINDER_MAX_ATTEMPTS:
            # Retry later with back-off; the occurrence stays due.
            reminder.attempts += 1
            reminder.claimed_until = now + datetime.timedelta(minutes=reminder.attempts)
            reminder.claimed_by = ""
            reminder.save(update_fields=["attempts", "claimed_until", "claimed_by"])
            return False
        status = ReminderDelivery.Status.FAILED if error else ReminderDelivery.Status.SENT
        ReminderDelivery.objects.create(
            reminder=reminder,
            occurrence_at=claim.occurrence,
            delivered_at=now,
            channel=channel,
            status=status,
            late=late,
            error=error,
            worker=claim.token,
        )
        following = None
        if reminder.rrule:
            # Missed occurrences collapse into this one late delivery: the next is after now.
            following = schedule.next_occurrence(
                rule_text=reminder.rrule, first=reminder.time, zone=reminder.zone, after=max(claim.occurrence, now)
            )
        reminder.next_fire_at = following
        reminder.attempts = 0
        reminder.claimed_until = None
        reminder.claimed_by = ""
        reminder.save(update_fields=["next_fire_at", "attempts", "claimed_until", "claimed_by"])
        if following is not None:
            transaction.on_commit(lambda: reminder_sweep_enqueue(at=following))
    _delivery_observed(channel, status, lag=now - claim.occurrence)  # committed: the delivery is on record
    return not error


def reminders_deliver_due(
    *, worker: str = "worker", now: datetime.datetime | None = None, batch: int = REMINDER_BATCH
) -> int:
    """Deliver every due occurrence no other worker holds; returns how many were delivered."""
    delivered = 0
    fixed_now = now
    while True:
        now = fixed_now or timezone.now()
        claims = _reminders_claim(worker=worker, now=now, batch=batch)
        if not claims:
            return delivered
        reminders = Reminder.objects.select_related("owner").in_bulk([c.reminder_id for c in claims])
        webhooks = dict(
            Profile.objects.filter(owner__in={r.owner_id for r in reminders.values()})
            .exclude(webhook_url="")
            .values_list("owner_id", "webhook_url")
        )
        for claim in claims:
            reminder = reminders[claim.reminder_id]
            webhook_url = webhooks.get(reminder.owner_id, "")
            channel = ReminderDelivery.Channel.WEBHOOK if webhook_url else ReminderDelivery.Channel.EMAIL
            late = now - claim.occurrence > LATE_AFTER
            error = ""
            try:
                _send_reminder(reminder, claim.occurrence, late, webhook_url)
            except Exception as exc:  # recorded on the delivery and retried; never raised into the worker
                error = _failure_reason(exc, webhook_url)[:1000]
                logger.warning("Reminder %s delivery failed: %s", reminder.public_id, _failure_detail(exc, webhook_url))
            finished_at = fixed_now or timezone.now()
            delivered += _reminder_finish(claim, channel=channel, error=error, now=finished_at, late=late)
