"""InnerVoice records: contacts, events, messages, reminders and their delivery history.

Every row belongs to the user who owns the API key that created it (`owner`); tools never read
or write across owners. Public ids (`evt_…`, `msg_…`, `rem_…`, `ct_…`) are what the tools return,
so database keys are never exposed.
"""

from __future__ import annotations

import datetime
import secrets
import zoneinfo

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Length, Trim
from django.db.models.lookups import GreaterThanOrEqual
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from mcpsite.formats import moment_in


def public_id(prefix: str) -> str:
    # 60 random bits: unguessable enough for ids that are always scoped by owner anyway.
    return f"{prefix}_{secrets.token_hex(6)}"


def new_event_id() -> str:
    return public_id("evt")


def new_message_id() -> str:
    return public_id("msg")


def new_reminder_id() -> str:
    return public_id("rem")


def new_contact_id() -> str:
    return public_id("ct")


def new_feed_token() -> str:
    return secrets.token_urlsafe(24)


def zone_for(name: str) -> datetime.tzinfo:
    """The tzinfo a record was written in: an IANA name ("Asia/Tokyo") or a fixed offset ("+05:30")."""
    if name[:1] in "+-":
        sign = -1 if name[0] == "-" else 1
        hours, minutes = int(name[1:3]), int(name[4:6])
        return datetime.timezone(sign * datetime.timedelta(hours=hours, minutes=minutes))
    return zoneinfo.ZoneInfo(name)


class Platform(models.TextChoices):
    EMAIL = "email", _("email")
    SMS = "sms", _("SMS")


PLATFORMS = tuple(Platform.values)


class Profile(models.Model):
    """Per-owner delivery settings and the secret of the iCalendar feed."""

    owner = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reminder_profile", verbose_name=_("owner")
    )
    webhook_url = models.URLField(
        _("webhook URL"),
        blank=True,
        help_text=_("When set, reminders are POSTed here as JSON instead of emailed to the owner."),
    )
    feed_token = models.CharField(_("feed token"), max_length=64, unique=True, default=new_feed_token, editable=False)
    feed_token_rotated_at = models.DateTimeField(_("feed URL issued at"), auto_now_add=True)

    class Meta:
        verbose_name = _("delivery profile")
        verbose_name_plural = _("delivery profiles")
        constraints = [
            models.CheckConstraint(
                condition=Q(webhook_url="")
                | Q(webhook_url__startswith="http://")
                | Q(webhook_url__startswith="https://"),
                name="reminders_profile_webhook_http",
            ),
            models.CheckConstraint(
                condition=GreaterThanOrEqual(Length("feed_token"), 20), name="reminders_profile_token_long"
            ),
        ]

    def __str__(self) -> str:
        return _("profile of %(owner)s") % {"owner": self.owner}

    @property
    def feed_path(self) -> str:
        return f"/calendar/{self.feed_token}.ics"


class Contact(models.Model):
    """Someone `message.send` can reach; managed by staff in the admin."""

    public_id = models.CharField(_("public ID"), max_length=20, unique=True, default=new_contact_id, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="contacts", verbose_name=_("owner")
    )
    name = models.CharField(_("name"), max_length=100)
    email = models.EmailField(_("email"), blank=True)
    phone = models.CharField(_("phone"), max_length=32, blank=True, help_text=_("E.164, e.g. +819012345678"))
    preferred_platform = models.CharField(
        _("preferred platform"), max_length=5, choices=Platform.choices, default=Platform.EMAIL
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("contact")
        verbose_name_plural = _("contacts")
        indexes = [models.Index(fields=["owner", "name"])]
        constraints = [
            models.CheckConstraint(condition=Q(preferred_platform__in=PLATFORMS), name="reminders_contact_platform"),
            models.CheckConstraint(condition=~Q(email="") | ~Q(phone=""), name="reminders_contact_reachable"),
            # The preferred platform must have an address, or a default send could never work.
            models.CheckConstraint(
                condition=(Q(preferred_platform="email") & ~Q(email="")) | (Q(preferred_platform="sms") & ~Q(phone="")),
                name="reminders_contact_preferred_has_address",
            ),
            models.CheckConstraint(condition=~Q(name=""), name="reminders_contact_name_nonempty"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.public_id})"

    def address(self, platform: str) -> str:
        return self.email if platform == Platform.EMAIL else self.phone


class Event(models.Model):
    public_id = models.CharField(_("public ID"), max_length=20, unique=True, default=new_event_id, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="events", verbose_name=_("owner")
    )
    title = models.CharField(_("title"), max_length=200)
    start = models.DateTimeField(_("start"), db_index=True)
    # The zone the start was written in ("Asia/Tokyo" or "+05:30"), so it reads back as given.
    tz = models.CharField(_("time zone"), max_length=64)
    duration_min = models.PositiveIntegerField(_("duration (minutes)"))
    description = models.TextField(_("description"), blank=True)
    location = models.CharField(_("location"), max_length=200, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["start"]
        verbose_name = _("event")
        verbose_name_plural = _("events")
        indexes = [models.Index(fields=["owner", "start"])]
        constraints = [
            models.CheckConstraint(condition=Q(duration_min__gt=0), name="reminders_event_duration_positive"),
            models.CheckConstraint(
                condition=~Q(title="") & Q(title=Trim("title")), name="reminders_event_title_trimmed"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} @ {moment_in(self.start, zone_for(self.tz))}"

    @property
    def start_local(self) -> datetime.datetime:
        return self.start.astimezone(zone_for(self.tz))

    @property
    def end(self) -> datetime.datetime:
        return self.start + datetime.timedelta(minutes=self.duration_min)


class Message(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("queued")
        SENDING = "sending", _("sending")
        SENT = "sent", _("sent")
        FAILED = "failed", _("failed")

    public_id = models.CharField(_("public ID"), max_length=20, unique=True, default=new_message_id, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="messages", verbose_name=_("owner")
    )
    contact = models.ForeignKey(Contact, on_delete=models.PROTECT, related_name="messages", verbose_name=_("contact"))
    platform = models.CharField(_("platform"), max_length=5, choices=Platform.choices)
    # The address at the time of sending: editing the contact later does not rewrite history.
    address = models.CharField(pgettext_lazy("message recipient", "address"), max_length=254)
    text = models.TextField(_("text"))
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    failure_reason = models.TextField(_("failure reason"), blank=True)
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    claimed_until = models.DateTimeField(_("claimed until"), null=True, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True, db_index=True)
    sent_at = models.DateTimeField(_("sent at"), null=True, blank=True)
    # The user's confirmation this message was sent on (MCP 2026-07-28 round trip): unique, so a client repeating
    # the confirmed request (a lost reply) gets this message back instead of sending another. Null: not asked.
    confirmation_key = models.CharField(
        _("confirmation key"), max_length=64, null=True, blank=True, unique=True, editable=False
    )

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("message")
        verbose_name_plural = _("messages")
        constraints = [
            models.CheckConstraint(condition=Q(platform__in=PLATFORMS), name="reminders_message_platform"),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "sending", "sent", "failed"]), name="reminders_message_status"
            ),
            models.CheckConstraint(
                condition=~Q(status="failed") | ~Q(failure_reason=""), name="reminders_message_failed_has_reason"
            ),
            models.CheckConstraint(
                condition=~Q(status="sent") | Q(sent_at__isnull=False), name="reminders_message_sent_has_time"
            ),
            models.CheckConstraint(condition=~Q(text=""), name="reminders_message_text_nonempty"),
        ]

    def __str__(self) -> str:
        return _("%(id)s to %(contact)s (%(status)s)") % {
            "id": self.public_id,
            "contact": self.contact.name,
            "status": self.get_status_display(),
        }


class Reminder(models.Model):
    public_id = models.CharField(_("public ID"), max_length=20, unique=True, default=new_reminder_id, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reminders", verbose_name=_("owner")
    )
    note = models.TextField(_("note"))
    time = models.DateTimeField(_("time"), help_text=_("The first occurrence."))
    tz = models.CharField(
        _("time zone"), max_length=64, help_text=_('The zone the time was written in ("Asia/Tokyo" or "+05:30").')
    )
    repeat = models.CharField(
        _("repeat"), max_length=500, blank=True, help_text=_("As given: daily, weekly, … or RRULE text.")
    )
    rrule = models.CharField(
        _("RRULE"), max_length=500, blank=True, help_text=_("The normalised RFC 5545 rule; empty = once.")
    )
    # The next occurrence to deliver; NULL once a one-off (or a finished rule) has been delivered.
    next_fire_at = models.DateTimeField(_("next fire time"), null=True, blank=True)
    # A worker's lease on the current occurrence: it expires, so a worker that dies mid-delivery
    # leaves the occurrence to be picked up again instead of losing it.
    claimed_until = models.DateTimeField(_("claimed until"), null=True, blank=True)
    claimed_by = models.CharField(_("claimed by"), max_length=64, blank=True)
    # Failed attempts at the current occurrence (reset when it is recorded).
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    is_active = models.BooleanField(_("active"), default=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["next_fire_at"]
        verbose_name = _("reminder")
        verbose_name_plural = _("reminders")
        indexes = [
            # The due-reminder picker's scan.
            models.Index(fields=["next_fire_at"], condition=Q(is_active=True), name="reminders_due_idx"),
            models.Index(fields=["owner", "next_fire_at"]),
        ]
        constraints = [
            models.CheckConstraint(condition=~Q(note=""), name="reminders_reminder_note_nonempty"),
            models.CheckConstraint(
                condition=Q(next_fire_at__isnull=True) | Q(next_fire_at__gte=models.F("time")),
                name="reminders_reminder_next_after_first",
            ),
            models.CheckConstraint(condition=Q(rrule="") | ~Q(repeat=""), name="reminders_reminder_rule_has_source"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id}: {self.note[:40]}"

    @property
    def zone(self) -> datetime.tzinfo:
        return zone_for(self.tz)


class ReminderDelivery(models.Model):
    """One delivered occurrence. The unique constraint is the last line of defence against doubles."""

    class Channel(models.TextChoices):
        EMAIL = "email", _("email")
        WEBHOOK = "webhook", _("webhook")

    class Status(models.TextChoices):
        SENT = "sent", _("sent")
        FAILED = "failed", _("failed")

    reminder = models.ForeignKey(
        Reminder, on_delete=models.CASCADE, related_name="deliveries", verbose_name=_("reminder")
    )
    occurrence_at = models.DateTimeField(_("occurrence"))
    delivered_at = models.DateTimeField(_("delivered at"))
    channel = models.CharField(_("channel"), max_length=10, choices=Channel.choices)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices)
    late = models.BooleanField(
        _("late"), default=False, help_text=_("Delivered well after its time (the worker was down).")
    )
    error = models.TextField(_("error"), blank=True)
    worker = models.CharField(_("worker"), max_length=64, blank=True)

    class Meta:
        ordering = ["-occurrence_at"]
        constraints = [
            models.UniqueConstraint(fields=["reminder", "occurrence_at"], name="reminders_delivery_once"),
            models.CheckConstraint(condition=Q(channel__in=["email", "webhook"]), name="reminders_delivery_channel"),
            models.CheckConstraint(condition=Q(status__in=["sent", "failed"]), name="reminders_delivery_status"),
            models.CheckConstraint(
                condition=~Q(status="failed") | ~Q(error=""), name="reminders_delivery_failed_has_error"
            ),
        ]
        verbose_name = _("reminder delivery")
        verbose_name_plural = _("reminder deliveries")

    def __str__(self) -> str:
        # The occurrence in the reminder's own zone, as the inline's columns show it.
        when = moment_in(self.occurrence_at, self.reminder.zone)
        return f"{self.reminder.public_id} @ {when} ({self.get_status_display()})"


__all__ = ["Contact", "Event", "Message", "Platform", "Profile", "Reminder", "ReminderDelivery", "zone_for"]
