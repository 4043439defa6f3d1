"""One confirmation sends one message, even when the confirmed request arrives twice at once (PostgreSQL, and
SQLite with a file test database: SQLITE_TEST_NAME): the confirmation key is unique on the message, so the second
write finds the first."""

from __future__ import annotations

import threading

import pytest

from mcpsite.tests.concurrency import needs_concurrent_writers, run_together
from reminders import selectors, services
from reminders.models import Message

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def both_past_the_check(monkeypatch):
    """Each thread's first look for an earlier message with the key waits for the other thread's, so both find
    nothing and go on to write: the race of two replays, made certain."""
    needs_concurrent_writers()
    barrier = threading.Barrier(2)
    looked = threading.local()
    found_first: list = []
    real = selectors.message_confirmed

    def look(*, owner, key):
        found = real(owner=owner, key=key)
        if not getattr(looked, "once", False):
            looked.once = True
            found_first.append(found)
            barrier.wait(timeout=30)
        return found

    monkeypatch.setattr(selectors, "message_confirmed", look)
    return found_first


def send_twice_at_once(owner, key: str) -> list[str]:
    draft = services.message_prepare(owner=owner, to="山田花子", text="今から向かいます")
    sent, errors = run_together(lambda _i: services.message_send_draft(draft=draft, confirmation_key=key).public_id, 2)
    assert errors == []
    return sent


def test_two_concurrent_sends_of_one_confirmation_store_one_message(owner, contacts, both_past_the_check):
    sent = send_twice_at_once(owner, "confirmation-1")
    assert both_past_the_check == [None, None]  # both looked before either wrote
    assert len(sent) == 2 and sent[0] == sent[1]
    assert list(Message.objects.values_list("public_id", "confirmation_key")) == [(sent[0], "confirmation-1")]


def test_control_without_the_unique_record_both_send(owner, contacts, both_past_the_check, monkeypatch):
    """The same race with the key left off the row (a look-then-write with no record the database keeps unique):
    two messages."""
    real_create = Message.objects.create
    monkeypatch.setattr(Message.objects, "create", lambda **fields: real_create(**{**fields, "confirmation_key": None}))
    sent = send_twice_at_once(owner, "confirmation-1")
    assert both_past_the_check == [None, None]
    assert len(set(sent)) == 2 and Message.objects.count() == 2
