"""Wake the db_worker for due reminders: `manage.py reminders_scheduler [--interval 30] [--once]`.

Each reminder enqueues its own wake-up at its time; this loop is the safety net that recovers
occurrences whose worker died (their lease expires) and messages left behind. It only enqueues:
the db_worker does the delivery.
"""

import time

from django.core.management.base import BaseCommand
from django.db import close_old_connections

from reminders.services import reminder_sweep_ensure


class Command(BaseCommand):
    help = "Enqueue a due-reminder sweep every --interval seconds unless one is already waiting."

    def add_arguments(self, parser):
        parser.add_argument("--interval", type=float, default=30.0, help="Seconds between ticks (default 30).")
        parser.add_argument("--once", action="store_true", help="Tick once and exit.")

    def handle(self, *, interval: float, once: bool, **options):
        while True:
            if reminder_sweep_ensure() and options["verbosity"] > 1:
                self.stdout.write("enqueued a reminder sweep")
            if once:
                return
            time.sleep(interval)
            close_old_connections()  # a long-lived loop must not keep a dead connection
