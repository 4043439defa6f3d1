"""The database refuses bad rows even when the Python checks are bypassed."""

import datetime

import pytest
from django.db import IntegrityError, transaction

from reminders.models import Contact, Event, Message, Profile, Reminder, ReminderDelivery

pytestmark = pytest.mark.django_db

AT = datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)


def refused(factory):
    with pytest.raises(IntegrityError), transaction.atomic():
        factory()


def test_event_constraints(owner):
    refused(lambda: Event.objects.create(owner=owner, title="x", start=AT, tz="+00:00", duration_min=0))
    refused(lambda: Event.objects.create(owner=owner, title=" x ", start=AT, tz="+00:00", duration_min=5))
    refused(lambda: Event.objects.create(owner=owner, title="", start=AT, tz="+00:00", duration_min=5))


def test_contact_constraints(owner):
    refused(lambda: Contact.objects.create(owner=owner, name="nobody"))
    refused(lambda: Contact.objects.create(owner=owner, name="a", email="a@example.com", preferred_platform="sms"))
    refused(lambda: Contact.objects.create(owner=owner, name="", email="a@example.com"))


def test_message_constraints(owner, contacts):
    contact = contacts["hanako"]
    base = {"owner": owner, "contact": contact, "platform": "email", "address": "a@example.com", "text": "x"}
    refused(lambda: Message.objects.create(**{**base, "status": "failed"}))
    refused(lambda: Message.objects.create(**{**base, "status": "sent"}))
    refused(lambda: Message.objects.create(**{**base, "platform": "fax"}))
    refused(lambda: Message.objects.create(**{**base, "text": ""}))


def test_reminder_and_delivery_constraints(owner):
    refused(lambda: Reminder.objects.create(owner=owner, note="", time=AT, tz="+00:00", next_fire_at=AT))
    refused(
        lambda: Reminder.objects.create(
            owner=owner, note="n", time=AT, tz="+00:00", next_fire_at=AT - datetime.timedelta(days=1)
        )
    )
    refused(lambda: Reminder.objects.create(owner=owner, note="n", time=AT, tz="+00:00", rrule="FREQ=DAILY"))
    reminder = Reminder.objects.create(owner=owner, note="n", time=AT, tz="+00:00", next_fire_at=AT)
    row = {"reminder": reminder, "occurrence_at": AT, "delivered_at": AT, "channel": "email", "status": "sent"}
    ReminderDelivery.objects.create(**row)
    refused(lambda: ReminderDelivery.objects.create(**row))  # the same occurrence twice
    refused(
        lambda: ReminderDelivery.objects.create(
            **{**row, "occurrence_at": AT + datetime.timedelta(1), "status": "failed"}
        )
    )


def test_profile_constraints(owner):
    refused(lambda: Profile.objects.create(owner=owner, webhook_url="ftp://x"))
    refused(lambda: Profile.objects.create(owner=owner, feed_token="short"))
