"""seed_reminders is idempotent; the scheduler tick enqueues one sweep at a time."""

import pytest
from django.core.management import call_command
from django_tasks_db.models import DBTaskResult

from reminders.models import Contact, Event, Reminder

pytestmark = pytest.mark.django_db


def test_seed_reminders_twice_creates_nothing_new():
    call_command("seed_reminders", "--user", "demo")
    counts = (Contact.objects.count(), Event.objects.count(), Reminder.objects.count())
    call_command("seed_reminders", "--user", "demo")
    assert (Contact.objects.count(), Event.objects.count(), Reminder.objects.count()) == counts
    assert counts == (3, 3, 4)
    assert Reminder.objects.filter(rrule="FREQ=WEEKLY;BYDAY=MO,TH").exists()


def test_scheduler_once(database_tasks):
    call_command("reminders_scheduler", "--once")
    call_command("reminders_scheduler", "--once")
    assert DBTaskResult.objects.filter(task_path="reminders.tasks.deliver_due_reminders").count() == 1
