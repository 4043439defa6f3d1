"""Wake the db_worker for due reminders: `manage.py reminders_scheduler [--interval 30] [--once]`.

Each reminder enqueues its own wake-up at its time; this loop is the safety net that recovers
occurrences whose worker died (their lease expires), messages left behind, and task rows a dead worker
left RUNNING. It only enqueues: the db_worker does the delivery. It rides through database outages (one
log line per outage, backoff, then it resumes), beats a heartbeat at every tick (`/readyz`, `/metrics`)
and ends only on a signal.
"""

import logging
import os
import signal
import socket
import sys
import time

from django.core.management.base import BaseCommand
from django.db import close_old_connections
from django.utils import timezone

from mcpsite.core.outage import DEPENDENCY_ERRORS, Outage
from mcpsite.models import Heartbeat
from mcpsite.services import heartbeat_beat, heartbeat_end, task_results_recover_lost
from reminders.services import reminder_sweep_ensure

logger = logging.getLogger("reminders")


class Command(BaseCommand):
    help = "Enqueue a due-reminder sweep every --interval seconds unless one is already waiting."

    def add_arguments(self, parser):
        parser.add_argument("--interval", type=float, default=30.0, help="Seconds between ticks (default 30).")
        parser.add_argument("--once", action="store_true", help="Tick once and exit.")

    def tick(self, *, name: str, started_at, verbosity: int) -> None:
        if reminder_sweep_ensure() and verbosity > 1:
            self.stdout.write("enqueued a reminder sweep")
        task_results_recover_lost()
        heartbeat_beat(name=name, kind=Heartbeat.Kind.SCHEDULER, started_at=started_at)

    def handle(self, *, interval: float, once: bool, **options):
        name = f"scheduler@{socket.gethostname()}:{os.getpid()}"[:100]
        started_at = timezone.now()
        outage = Outage(logger, "Reminder scheduler")
        # SIGTERM ends the loop through `finally` (the heartbeat is removed) instead of killing the process outright
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
        try:
            while True:
                try:
                    self.tick(name=name, started_at=started_at, verbosity=options["verbosity"])
                except DEPENDENCY_ERRORS as exc:
                    outage.pause(exc)
                    continue
                outage.up()
                if once:
                    return
                time.sleep(interval)
                close_old_connections()  # a long-lived loop must not keep a dead connection
        finally:
            signal.signal(signal.SIGTERM, previous)
            try:
                heartbeat_end(name=name)
            except DEPENDENCY_ERRORS:
                pass  # the database is down; the row is forgotten a day after its last beat
