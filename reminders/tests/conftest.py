"""Fixtures for the reminders tests: an owner with contacts, a fixed clock, Tokyo times."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import zoneinfo

import pytest
from django_tasks_db.management.commands.db_worker import Worker

from reminders import webhooks
from reminders.models import Contact
from reminders.sms import LocmemSmsBackend

TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")


# What the fake resolver answers: public addresses for the test hosts (nothing connects to them; `responses` or a
# refusal stops every request first). Anything else does not resolve, so no test asks a real DNS server.
FAKE_DNS = {
    "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "new.example.com": ["93.184.215.15"],
}


@pytest.fixture(autouse=True)
def fake_dns(monkeypatch):
    """The webhook resolver answers from FAKE_DNS (a test may add names); IP literals resolve as themselves."""
    names = {name: list(addresses) for name, addresses in FAKE_DNS.items()}

    def resolve(host, port):
        try:
            addresses = names.get(host) or [str(ipaddress.ip_address(host.split("%", 1)[0]))]
        except ValueError:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses
        ]

    monkeypatch.setattr(webhooks, "getaddrinfo", resolve)
    return names


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


@pytest.fixture
def database_tasks(settings):
    """Enqueued tasks go to django-tasks-db's table, for `run_worker` (the real db_worker) to run."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


def run_worker(worker_id="w1"):
    """One pass of the real db_worker over every task that is due."""
    Worker(
        queue_names=["default"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id=worker_id,
        excluded_queue_names=[],
    ).run()


def future(days=1, hour=7, minute=0) -> datetime.datetime:
    """A whole-minute Tokyo time `days` from now."""
    now = datetime.datetime.now(TOKYO)
    return (now + datetime.timedelta(days=days)).replace(hour=hour, minute=minute, second=0, microsecond=0)
