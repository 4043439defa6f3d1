"""`manage.py db_worker`: django-tasks-db's worker, riding through database and Redis outages.

The library's worker ends with the first database error it does not expect (a restart of PostgreSQL, say), so
nothing would deliver until someone restarted it. This command is the library's own (its options, its loop, its
signal handling) run again after such an error: it logs once per outage, waits with backoff, puts back the task it
was running when the database went away, and resumes. It ends only when its work is done (`--batch`,
`--max-tasks`) or on a signal (SIGTERM, SIGINT: the library's graceful stop). It beats a heartbeat while it runs
(`/readyz`, `/metrics`), and at each start queues again the task rows a dead worker left RUNNING.

It takes precedence over django-tasks-db's command of the same name because `mcpsite` comes before the library in
INSTALLED_APPS.
"""

from __future__ import annotations

import logging
from typing import Any

from django_tasks_db.management.commands import db_worker

from mcpsite.background import HeartbeatThread
from mcpsite.core.outage import DEPENDENCY_ERRORS, Outage
from mcpsite.models import Heartbeat
from mcpsite.observability import forget_dead_processes, process_ended
from mcpsite.services import task_results_recover_lost

logger = logging.getLogger("mcpsite")


class Command(db_worker.Command):
    help = "Run the database task worker; it rides through database and Redis outages and stops on a signal."

    def handle(self, *args: Any, **options: Any) -> None:
        worker_id = options["worker_id"]
        outage = Outage(logger, f"Task worker {worker_id}")
        forget_dead_processes()
        try:
            while True:
                try:
                    task_results_recover_lost(abandoned_by=worker_id)
                    outage.up()
                    with HeartbeatThread(name=worker_id, kind=Heartbeat.Kind.TASK_WORKER):
                        super().handle(*args, **options)
                    return
                except DEPENDENCY_ERRORS as exc:
                    outage.pause(exc)
        finally:
            process_ended()
