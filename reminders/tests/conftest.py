"""Fixtures for the reminders tests: an owner with contacts, a fixed clock, Tokyo times."""

from __future__ import annotations

import datetime
import zoneinfo

import pytest

from reminders.models import Contact
from reminders.sms import LocmemSmsBackend

TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")


@pytest.fixture
def owner(user):
    return user


@pytest.fixture
def contacts(owner):
    return {
        "hanako": Contact.objects.create(
            owner=owner, name="山田花子", email="hanako@example.com", phone="+819011112222"
        ),
        "taro": Contact.objects.create(
            owner=owner, name="Taro Suzuki", phone="+819033334444", preferred_platform="sms"
        ),
        "taro2": Contact.objects.create(owner=owner, name="Taro Tanaka", email="tanaka@example.com"),
    }


@pytest.fixture
def sms_outbox(settings):
    settings.SMS_BACKEND = "reminders.sms.LocmemSmsBackend"
    LocmemSmsBackend.outbox = []
    yield LocmemSmsBackend.outbox
    LocmemSmsBackend.outbox = []


@pytest.fixture
def immediate_tasks(settings):
    """Run enqueued tasks at once (the worker path itself is covered by the db_worker tests)."""
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}


def future(days=1, hour=7, minute=0) -> datetime.datetime:
    """A whole-minute Tokyo time `days` from now."""
    now = datetime.datetime.now(TOKYO)
    return (now + datetime.timedelta(days=days)).replace(hour=hour, minute=minute, second=0, microsecond=0)
