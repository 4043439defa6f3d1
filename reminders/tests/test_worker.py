"""The real django-tasks-db worker delivers what the tools queue (SQLite and PostgreSQL)."""

import datetime

import pytest
from django.core import mail
from django.db import connection
from django_tasks_db.models import DBTaskResult

from reminders import services
from reminders.models import Message, Reminder

from .conftest import run_worker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("database_tasks")]


def test_message_sent_by_the_db_worker(owner, contacts):
    message = services.message_send(owner=owner, to="山田花子", text="db worker")
    assert DBTaskResult.objects.count() == 1
    run_worker()
    message.refresh_from_db()
    assert message.status == "sent" and len(mail.outbox) == 1
    assert DBTaskResult.objects.get().status == "SUCCESSFUL"


def test_reminder_waits_for_its_time_then_is_delivered(owner):
    now = datetime.datetime.now(datetime.UTC)
    at = now + datetime.timedelta(seconds=1)
    reminder = services.reminder_create(owner=owner, time=at, tz="+00:00", note="soon", now=now)
    task = DBTaskResult.objects.get()
    assert task.run_after == at
    if datetime.datetime.now(datetime.UTC) < at:
        run_worker()  # not due yet: nothing runs
        assert mail.outbox == [] and task.__class__.objects.get().status == "READY"
    DBTaskResult.objects.update(run_after=now)  # time passes
    Reminder.objects.filter(pk=reminder.pk).update(time=now, next_fire_at=now)
    run_worker()
    assert len(mail.outbox) == 1 and reminder.deliveries.count() == 1


def test_missed_reminder_is_delivered_late_when_the_worker_returns(owner):
    long_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=3)
    reminder = Reminder.objects.create(
        owner=owner, note="missed", time=long_ago, tz="Asia/Tokyo", next_fire_at=long_ago
    )
    services.reminder_sweep_ensure()  # what the scheduler does every tick
    run_worker()
    delivery = reminder.deliveries.get()
    assert delivery.late and "late" in mail.outbox[0].body
    assert Message.objects.count() == 0
    connection.close()
