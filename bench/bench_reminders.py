"""Reminders benchmark: delivering a burst of due reminders, batched claims against one-at-a-time.

Standalone: makes a temporary MCPSITE_VAR_DIR, migrates a fresh SQLite database, creates N due
reminders and delivers them with the real sweep (`reminders_deliver_due`, claiming 50 rows per
locking transaction) and with a baseline that claims one row per transaction, side by side in the
same process, mail to the in-memory backend. Also times `reminder.create` through the dispatcher.
Prints reminders/s and the ratio (these machines are noisy; ratios are what count).

    .venv/bin/python bench/bench_reminders.py [--reminders 1000] [--calls 300]
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot  # noqa: E402

# Deliveries go to memory and wake-ups run nowhere: the benchmark measures the delivery path itself.
os.environ.setdefault("EMAIL_URL", "locmem://")
os.environ.setdefault("TASKS_BACKEND", "django.tasks.backends.dummy.DummyBackend")
boot("reminders")

from django.contrib.auth import get_user_model  # noqa: E402
from django.core import mail  # noqa: E402
from tqdm import tqdm  # noqa: E402

from mcpsite.mcp import dispatch  # noqa: E402
from mcpsite.mcp.registry import CallContext  # noqa: E402
from reminders import services  # noqa: E402
from reminders.models import Reminder, ReminderDelivery  # noqa: E402


def make_due(owner, count: int) -> None:
    at = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=1)
    rows = [Reminder(owner=owner, note=f"bench {i}", time=at, tz="Asia/Tokyo", next_fire_at=at) for i in range(count)]
    for start in tqdm(range(0, count, 500), desc=f"creating {count} due reminders", unit="batch", leave=False):
        Reminder.objects.bulk_create(rows[start : start + 500])


def timed_delivery(owner, count: int, batch: int) -> float:
    ReminderDelivery.objects.all().delete()
    Reminder.objects.all().delete()
    mail.outbox = []
    make_due(owner, count)
    started = time.perf_counter()
    delivered = services.reminders_deliver_due(worker=f"bench-{batch}", batch=batch)
    elapsed = time.perf_counter() - started
    assert delivered == count == len(mail.outbox), (delivered, count, len(mail.outbox))
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reminders", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()

    owner = get_user_model().objects.create_user(username="bench", email="bench@example.com")
    mail.outbox = []

    print(f"delivering {args.reminders} due reminders …", flush=True)
    baseline = timed_delivery(owner, args.reminders, batch=1)
    batched = timed_delivery(owner, args.reminders, batch=services.REMINDER_BATCH)
    print(f"  one claim per reminder : {args.reminders / baseline:8.0f} reminders/s")
    print(f"  claims of {services.REMINDER_BATCH:<3}          : {args.reminders / batched:8.0f} reminders/s")
    print(f"  ratio (batched / one)  : {baseline / batched:8.2f}x")

    ctx = CallContext(transport="bench", request_id="bench", owner=owner)
    when = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1)).isoformat()
    started = time.perf_counter()
    for i in tqdm(range(args.calls), desc="reminder.create calls", leave=False):
        result = dispatch.call_tool(ctx, "reminder.create", {"time": when, "note": f"n{i}", "repeat": "weekdays"})
        assert result.data["status"] == "ok", result.data
    per_call = (time.perf_counter() - started) / args.calls
    started = time.perf_counter()
    for i in range(args.calls):
        Reminder.objects.create(owner=owner, note=f"raw{i}", time=when, tz="+00:00", next_fire_at=when)
    raw = (time.perf_counter() - started) / args.calls
    print(
        f"reminder.create through the dispatcher: {per_call * 1000:6.2f} ms/call "
        f"({per_call / raw:.1f}x a bare INSERT: parse, validate, rule check, audit row)"
    )


if __name__ == "__main__":
    main()
