"""Two db_workers and 200 reminders due at once: 200 deliveries, none twice; the message picker locks only the
message (PostgreSQL)."""

import datetime
import time

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.db import transaction

from mcpsite.tests.concurrency import held_in_another_transaction, run_together
from reminders import services
from reminders.models import Message, Reminder, ReminderDelivery

from .conftest import run_worker

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("database_tasks")]

DUE = 200


def due_reminders(owner, count=DUE):
    at = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=5)
    Reminder.objects.bulk_create(
        Reminder(owner=owner, note=f"r{i}", time=at, tz="Asia/Tokyo", next_fire_at=at) for i in range(count)
    )
    # What reminder.create enqueues for each: a wake-up at its time.
    for _ in range(count):
        services.reminder_sweep_enqueue(at=at)


def two_workers():
    _done, errors = run_together(lambda i: run_worker(f"w{i}"), 2)
    assert not errors


def test_two_workers_deliver_each_due_reminder_exactly_once(owner):
    due_reminders(owner)
    two_workers()
    ids = [m.extra_headers["Message-ID"] for m in mail.outbox]
    assert len(ids) == DUE and len(set(ids)) == DUE
    assert ReminderDelivery.objects.count() == DUE
    assert not Reminder.objects.filter(next_fire_at__isnull=False).exists()
    # Both workers really took part (the due set was split, not run by one of them).
    assert len({d.worker.split("/")[0] for d in ReminderDelivery.objects.all()}) == 2


def test_control_without_the_row_lock_reminders_are_delivered_twice(owner, monkeypatch):
    """The same picker without SELECT … FOR UPDATE SKIP LOCKED: both workers take the same rows."""

    def unlocked(*, now, limit):
        rows = list(
            Reminder.objects.filter(is_active=True, next_fire_at__lte=now, claimed_until__isnull=True).order_by(
                "next_fire_at", "pk"
            )[:limit]
        )
        time.sleep(0.3)  # the other worker reads the same rows meanwhile
        return rows

    monkeypatch.setattr(services, "_reminders_due_locked", unlocked)
    due_reminders(owner, count=50)
    two_workers()
    ids = [m.extra_headers["Message-ID"] for m in mail.outbox]
    assert len(ids) > len(set(ids)), "expected duplicate deliveries without the lock"
    # The unique constraint still keeps the history honest: one recorded delivery per occurrence.
    assert ReminderDelivery.objects.count() <= 50


def owner_row_locked(owner):
    """Another transaction holds the owner's `auth_user` row (as any concurrent write for the same owner does) until
    the block ends: the interleaving under which the message picker used to pass the message by."""
    return held_in_another_transaction(lambda: User.objects.select_for_update().get(pk=owner.pk))


def test_a_write_to_the_owners_row_does_not_delay_the_message(owner, contacts):
    message = services.message_send(owner=owner, to="山田花子", text="x")
    with owner_row_locked(owner):
        assert services.message_deliver(message_id=message.pk) == "sent"
    assert len(mail.outbox) == 1


def test_control_the_picker_locking_the_joined_owner_row_skips_the_message(owner, contacts):
    """The picker's query without `of=("self",)`: FOR UPDATE locks the joined `auth_user` row too, so SKIP LOCKED
    passes the message by while the owner's row is held."""
    message = services.message_send(owner=owner, to="山田花子", text="x")
    unscoped = Message.objects.select_for_update(skip_locked=True).select_related("owner").filter(pk=message.pk)
    scoped = Message.objects.select_for_update(skip_locked=True, of=("self",)).select_related("owner")
    with owner_row_locked(owner), transaction.atomic():
        assert unscoped.first() is None
        assert scoped.filter(pk=message.pk).first() == message
