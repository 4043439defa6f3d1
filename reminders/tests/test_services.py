"""Delivery that really happens: messages by mail/SMS, reminders once each, late, retried, never lost."""

import datetime
import json

import pytest
import requests
import responses
from django.core import mail

from mcpsite.core.errors import Conflict
from reminders import services, webhooks
from reminders.models import Message, Profile, Reminder, ReminderDelivery

from .conftest import TOKYO, future

pytestmark = pytest.mark.django_db

SENT_TO_PRIVATE = "https://hooks.example.com/remind"
GENERIC_FAILURE = "the webhook did not accept the delivery (details in the server log)"


# --- messages ----------------------------------------------------------------------------------


def test_email_message_is_sent_after_commit_by_the_task(
    owner, contacts, immediate_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        message = services.message_send(owner=owner, to="山田花子", text="今から向かいます")
    message.refresh_from_db()
    assert message.status == "sent" and message.sent_at is not None and message.attempts == 1
    assert len(mail.outbox) == 1
    sent = mail.outbox[0]
    assert sent.to == ["hanako@example.com"] and sent.body == "今から向かいます"
    assert sent.extra_headers["Message-ID"] == f"<{message.public_id}@mcpsite>"


def test_nothing_is_sent_before_commit(owner, contacts, immediate_tasks, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        message = services.message_send(owner=owner, to="山田花子", text="x")
    assert len(callbacks) == 1 and mail.outbox == []
    assert Message.objects.get(pk=message.pk).status == "queued"


def test_sms_goes_through_the_configured_backend(owner, contacts, sms_outbox):
    message = services.message_send(owner=owner, to="Taro Suzuki", text="着きました")
    assert services.message_deliver(message_id=message.pk) == "sent"
    assert sms_outbox == [{"to": "+819033334444", "text": "着きました"}]


def test_sms_without_a_provider_fails_clearly_and_can_be_resent(owner, contacts, sms_outbox, settings):
    message = services.message_send(owner=owner, to="Taro Suzuki", text="x")
    settings.SMS_BACKEND = ""  # the provider went away between queueing and delivery
    assert services.message_deliver(message_id=message.pk) == "failed"
    message.refresh_from_db()
    assert message.status == "failed" and "No SMS provider is configured" in message.failure_reason
    settings.SMS_BACKEND = "reminders.sms.LocmemSmsBackend"
    services.message_resend(message=message)
    assert Message.objects.get(pk=message.pk).status == "queued"
    assert services.message_deliver(message_id=message.pk) == "sent"
    assert len(sms_outbox) == 1
    with pytest.raises(Conflict, match="only failed messages"):
        services.message_resend(message=message)


def test_smtp_failure_is_recorded_with_its_reason(owner, contacts, settings):
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": 9, "timeout": 2},
        }
    }
    message = services.message_send(owner=owner, to="山田花子", text="x")
    assert services.message_deliver(message_id=message.pk) == "failed"
    message.refresh_from_db()
    assert message.failure_reason.startswith("ConnectionRefusedError")


def test_a_message_is_sent_once_even_if_its_task_runs_twice(owner, contacts):
    message = services.message_send(owner=owner, to="山田花子", text="x")
    assert services.message_deliver(message_id=message.pk) == "sent"
    assert services.message_deliver(message_id=message.pk) is None
    assert len(mail.outbox) == 1


def test_a_dead_workers_message_is_requeued_after_its_lease(
    owner, contacts, immediate_tasks, django_capture_on_commit_callbacks
):
    message = services.message_send(owner=owner, to="山田花子", text="x")
    now = datetime.datetime.now(datetime.UTC)
    lease_end = now + datetime.timedelta(minutes=5)
    Message.objects.filter(pk=message.pk).update(status="sending", claimed_until=lease_end, attempts=1)
    assert services.messages_requeue_stalled(now=now) == 0  # the lease still holds
    Message.objects.filter(pk=message.pk).update(claimed_until=now - datetime.timedelta(seconds=1))  # it expired
    with django_capture_on_commit_callbacks(execute=True):
        assert services.messages_requeue_stalled() == 1
    message.refresh_from_db()
    assert message.status == "sent" and message.attempts == 2 and len(mail.outbox) == 1


def test_a_message_resent_after_a_crash_carries_the_first_attempts_message_id(owner, contacts, monkeypatch):
    """The worker dies after the send and before recording it; after its lease the message goes out again, and the
    recipient can tell the copy by its Message-ID."""
    message = services.message_send(owner=owner, to="山田花子", text="x")
    real_send = services._send_message

    def send_then_die(sending):
        real_send(sending)
        raise SystemExit("killed after the send")

    monkeypatch.setattr(services, "_send_message", send_then_die)
    with pytest.raises(SystemExit):
        services.message_deliver(message_id=message.pk)
    monkeypatch.setattr(services, "_send_message", real_send)
    after_the_lease = datetime.datetime.now(datetime.UTC) + services.LEASE + datetime.timedelta(seconds=1)
    assert services.message_deliver(message_id=message.pk, now=after_the_lease) == "sent"
    first, second = (m.extra_headers["Message-ID"] for m in mail.outbox)
    assert first == second == f"<{message.public_id}@mcpsite>"
    assert Message.objects.get(pk=message.pk).attempts == 2


# --- reminders ---------------------------------------------------------------------------------


def make_reminder(owner, *, at=None, repeat=None, note="薬を飲む"):
    at = at or future()
    return services.reminder_create(
        owner=owner, time=at, tz="Asia/Tokyo", note=note, repeat=repeat, now=at - datetime.timedelta(hours=1)
    )


def test_due_reminder_is_emailed_once(owner):
    reminder = make_reminder(owner)
    before = reminder.next_fire_at - datetime.timedelta(seconds=1)
    assert services.reminders_deliver_due(now=before) == 0
    assert services.reminders_deliver_due(now=reminder.next_fire_at) == 1
    assert services.reminders_deliver_due(now=reminder.next_fire_at) == 0
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["owner@example.com"] and "薬を飲む" in mail.outbox[0].body
    delivery = reminder.deliveries.get()
    assert (delivery.status, delivery.channel, delivery.late) == ("sent", "email", False)
    reminder.refresh_from_db()
    assert reminder.next_fire_at is None and reminder.claimed_until is None


def test_repeating_reminder_schedules_its_next_occurrence(owner, immediate_tasks, django_capture_on_commit_callbacks):
    first = datetime.datetime(2030, 1, 7, 7, 0, tzinfo=TOKYO)  # a Monday
    reminder = make_reminder(owner, at=first, repeat="FREQ=WEEKLY;BYDAY=MO,WE")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert services.reminders_deliver_due(now=first) == 1
    reminder.refresh_from_db()
    assert reminder.next_fire_at == datetime.datetime(2030, 1, 9, 7, 0, tzinfo=TOKYO)
    assert len(callbacks) == 1  # the wake-up for the next occurrence, enqueued after commit


def test_missed_reminder_is_delivered_late_and_repeats_skip_to_the_future(owner):
    first = datetime.datetime(2030, 1, 7, 7, 0, tzinfo=TOKYO)
    reminder = make_reminder(owner, at=first, repeat="daily")
    back = first + datetime.timedelta(days=3, hours=2)  # the worker was down for three days
    assert services.reminders_deliver_due(now=back) == 1
    delivery = reminder.deliveries.get()
    assert delivery.late and delivery.occurrence_at == first
    assert "late" in mail.outbox[0].body
    reminder.refresh_from_db()
    assert reminder.next_fire_at == datetime.datetime(2030, 1, 11, 7, 0, tzinfo=TOKYO)


def test_a_worker_that_dies_mid_delivery_leaves_it_for_later(owner, monkeypatch):
    reminder = make_reminder(owner)
    due = reminder.next_fire_at
    monkeypatch.setattr(services, "_send_reminder", lambda *a: (_ for _ in ()).throw(SystemExit("killed")))
    with pytest.raises(SystemExit):
        services.reminders_deliver_due(worker="dying", now=due)
    monkeypatch.undo()
    reminder.refresh_from_db()
    assert reminder.claimed_by.startswith("dying/") and reminder.next_fire_at == due
    assert services.reminders_deliver_due(now=due + datetime.timedelta(minutes=1)) == 0  # the lease still holds
    assert services.reminders_deliver_due(now=due + datetime.timedelta(minutes=6)) == 1  # expired: picked up
    assert len(mail.outbox) == 1 and reminder.deliveries.get().late


@responses.activate
def test_a_reminder_resent_after_a_crash_carries_the_first_attempts_keys(owner, monkeypatch):
    """Sent, then the worker dies before recording: the occurrence goes out again after the lease with the same
    Idempotency-Key (webhook) and Message-ID (email)."""
    Profile.objects.create(owner=owner, webhook_url="https://hooks.example.com/remind")
    responses.post("https://hooks.example.com/remind", status=204)
    reminder = make_reminder(owner)
    due = reminder.next_fire_at
    real_send = services._send_reminder

    def send_then_die(*args):
        real_send(*args)
        raise SystemExit("killed after the send")

    monkeypatch.setattr(services, "_send_reminder", send_then_die)
    with pytest.raises(SystemExit):
        services.reminders_deliver_due(worker="dying", now=due)
    monkeypatch.setattr(services, "_send_reminder", real_send)
    assert services.reminders_deliver_due(now=due + datetime.timedelta(minutes=6)) == 1
    keys = [call.request.headers["Idempotency-Key"] for call in responses.calls]
    bodies = [json.loads(call.request.body)["delivery_key"] for call in responses.calls]
    assert len(keys) == 2 and len(set(keys)) == 1 and bodies == keys


def test_a_worker_whose_lease_ran_out_mid_send_does_not_record_the_delivery_again(owner, monkeypatch):
    """A slow send outlives its lease; another worker takes the occurrence over and delivers it. When the slow
    worker finishes, the re-check of its lease in `_reminder_finish` must refuse to record or reschedule: without it
    the occurrence would be recorded twice (or the next one skipped)."""
    first = datetime.datetime(2030, 1, 7, 7, 0, tzinfo=TOKYO)
    reminder = make_reminder(owner, at=first, repeat="daily")
    after_the_lease = first + datetime.timedelta(minutes=6)
    real_send = services._send_reminder
    taken_over = []

    def slow_send(*args):
        real_send(*args)
        if not taken_over:  # while the slow worker is still sending, its lease expires and another worker runs
            monkeypatch.setattr(services, "_send_reminder", real_send)
            taken_over.append(services.reminders_deliver_due(worker="other", now=after_the_lease))

    monkeypatch.setattr(services, "_send_reminder", slow_send)
    assert services.reminders_deliver_due(worker="slow", now=first) == 0  # sent, but not recorded: lease lost
    assert taken_over == [1]
    assert len(mail.outbox) == 2  # both sent: the window only the idempotency key closes (docs/apps/reminders.md)
    delivery = reminder.deliveries.get()
    assert delivery.worker.startswith("other/") and delivery.occurrence_at == first
    reminder.refresh_from_db()
    assert reminder.next_fire_at == datetime.datetime(2030, 1, 8, 7, 0, tzinfo=TOKYO)
    assert (reminder.claimed_by, reminder.claimed_until, reminder.attempts) == ("", None, 0)


@responses.activate
def test_webhook_delivery_with_idempotency_key(owner):
    Profile.objects.create(owner=owner, webhook_url="https://hooks.example.com/remind")
    responses.post("https://hooks.example.com/remind", status=204)
    reminder = make_reminder(owner, note="会議")
    assert services.reminders_deliver_due(now=reminder.next_fire_at) == 1
    call = responses.calls[0]
    key = call.request.headers["Idempotency-Key"]
    assert key.startswith(reminder.public_id + ".")
    assert b'"note": "\\u4f1a\\u8b70"' in call.request.body or "会議" in call.request.body.decode()
    assert reminder.deliveries.get().channel == "webhook" and mail.outbox == []


@responses.activate
def test_failing_webhook_is_retried_then_recorded_as_failed(owner, caplog):
    Profile.objects.create(owner=owner, webhook_url="https://hooks.example.com/remind")
    responses.post("https://hooks.example.com/remind", status=503)
    reminder = make_reminder(owner, repeat="daily")
    due = reminder.next_fire_at
    assert services.reminders_deliver_due(now=due) == 0
    reminder.refresh_from_db()
    assert reminder.attempts == 1 and reminder.next_fire_at == due
    assert services.reminders_deliver_due(now=due + datetime.timedelta(seconds=61)) == 0
    assert services.reminders_deliver_due(now=due + datetime.timedelta(minutes=4)) == 0
    delivery = ReminderDelivery.objects.get()
    # The record says only that it failed (no port oracle); the status is in the server log.
    assert delivery.status == "failed" and delivery.error == GENERIC_FAILURE
    assert "webhook answered HTTP 503" in caplog.text
    reminder.refresh_from_db()
    assert reminder.next_fire_at == due + datetime.timedelta(days=1) and reminder.attempts == 0
    assert len(responses.calls) == 3


@responses.activate
def test_unreachable_webhook_failure_never_records_or_logs_its_secret_parts(owner, caplog):
    # requests quotes the URL in its messages; the path, query and user info are often the secret.
    secret_url = "https://bot:s3cr3t-pass@hooks.example.com/services/T0/B0/s3cr3t-token?sig=s3cr3t-sig"
    Profile.objects.create(owner=owner, webhook_url=secret_url)
    responses.post(secret_url, body=requests.ConnectionError(f"Max retries exceeded with url: {secret_url}"))
    reminder = make_reminder(owner)
    due = reminder.next_fire_at
    for minutes in (0, 1.1, 4):
        services.reminders_deliver_due(now=due + datetime.timedelta(minutes=minutes))
    delivery = ReminderDelivery.objects.get()
    assert delivery.status == "failed"
    assert delivery.error == GENERIC_FAILURE
    assert "ConnectionError: the webhook at https://hooks.example.com could not be reached" in caplog.text
    assert "s3cr3t" not in caplog.text


@responses.activate
@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8080/h", "http://169.254.169.254/latest/meta-data/", "http://[::1]/h", SENT_TO_PRIVATE],
)
def test_webhook_to_a_non_public_address_is_refused_at_send_and_nothing_is_sent(owner, fake_dns, url):
    # Saved before the rule, or its name resolves elsewhere now: every send checks again.
    fake_dns["hooks.example.com"] = ["10.0.0.8"]
    Profile.objects.create(owner=owner, webhook_url=url)
    responses.post(url, status=204)  # what the target would answer if anything were sent
    reminder = make_reminder(owner)
    due = reminder.next_fire_at
    for minutes in (0, 1.1, 4):
        services.reminders_deliver_due(now=due + datetime.timedelta(minutes=minutes))
    assert len(responses.calls) == 0
    delivery = ReminderDelivery.objects.get()
    assert delivery.status == "failed" and delivery.error == f"the webhook URL was refused: {webhooks.REFUSED}"


def test_failure_detail_keeps_other_errors_but_hides_the_url():
    url = "https://hooks.example.com/x/s3cr3t"
    assert services._failure_detail(RuntimeError("webhook answered HTTP 503"), url) == (
        "RuntimeError: webhook answered HTTP 503"
    )
    assert "s3cr3t" not in services._failure_detail(ValueError(f"bad {url}"), url)
    assert services._failure_reason(RuntimeError("webhook answered HTTP 503"), url) == GENERIC_FAILURE
    assert services.webhook_origin(url="http://u:p@[::1]:8080/p?q=1") == "http://::1:8080"


def test_sweep_ensure_does_not_pile_up_while_workers_are_down(owner):
    from django_tasks_db.models import DBTaskResult

    assert services.reminder_sweep_ensure() is True
    assert services.reminder_sweep_ensure() is False
    assert DBTaskResult.objects.count() == 1


def test_reminder_create_is_refused_in_the_past(owner):
    from mcpsite.core.errors import InvalidParams

    with pytest.raises(InvalidParams, match="in the past"):
        services.reminder_create(owner=owner, time=future(days=-1), tz="Asia/Tokyo", note="n")
    assert not Reminder.objects.exists()
