"""The task worker and the scheduler survive their dependencies' outages, beat heartbeats that /readyz and /metrics
report with the task queue, and task rows a dead worker left RUNNING are queued again."""

from __future__ import annotations

import datetime
import logging

import pytest
from django.core.management import call_command, get_commands
from django.db import OperationalError
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.management.commands import db_worker as library_worker
from django_tasks_db.models import DBTaskResult, get_date_max

from mcpsite import services
from mcpsite.core import outage
from mcpsite.models import Heartbeat

pytestmark = pytest.mark.django_db

NOW = timezone.now()
LONG_AGO = NOW - datetime.timedelta(minutes=10)


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch):
    monkeypatch.setattr(outage, "FIRST_WAIT", 0.01)
    monkeypatch.setattr(outage, "MAX_WAIT", 0.02)


def task_row(*, status=TaskResultStatus.RUNNING, worker="w-dead", started_at=LONG_AGO, run_after=None):
    return DBTaskResult.objects.create(
        status=status,
        args_kwargs={"args": [], "kwargs": {"message_id": 1}},
        task_path="reminders.tasks.deliver_message",
        backend_name="default",
        run_after=run_after or get_date_max(),
        worker_ids=[worker] if worker else [],
        started_at=started_at if status == TaskResultStatus.RUNNING else None,
    )


def beat(name, *, at=NOW, kind=Heartbeat.Kind.TASK_WORKER):
    services.heartbeat_beat(name=name, kind=kind, started_at=at, now=at)


def test_db_worker_is_the_sites_command():
    """`manage.py db_worker` runs mcpsite's wrapper of django-tasks-db's worker, not the library's command alone."""
    assert get_commands()["db_worker"] == "mcpsite"


def test_rows_of_a_dead_worker_are_queued_again_and_a_live_workers_are_left_alone():
    dead = task_row(worker="w-dead")
    live = task_row(worker="w-live")
    fresh = task_row(worker="w-new", started_at=NOW)  # claimed a moment ago by a worker not yet seen beating
    beat("w-live")
    assert services.task_results_recover_lost(now=NOW) == 1
    statuses = dict(DBTaskResult.objects.values_list("pk", "status"))
    assert statuses == {dead.pk: "READY", live.pk: "RUNNING", fresh.pk: "RUNNING"}
    assert DBTaskResult.objects.get(pk=dead.pk).worker_ids == ["w-dead"]  # the attempt stays on record


def test_a_worker_that_lost_the_database_mid_task_gives_its_own_row_back():
    mine = task_row(worker="w-me", started_at=NOW)
    beat("w-me")
    assert services.task_results_recover_lost(now=NOW) == 0
    assert services.task_results_recover_lost(abandoned_by="w-me", now=NOW) == 1
    assert DBTaskResult.objects.get(pk=mine.pk).status == "READY"


def test_heartbeats_silent_for_a_day_are_forgotten():
    beat("w-old", at=NOW - datetime.timedelta(days=2))
    beat("w-new")
    services.task_results_recover_lost(now=NOW)
    assert list(Heartbeat.objects.values_list("name", flat=True)) == ["w-new"]


@pytest.mark.django_db(transaction=True)  # an outage drops the connections
def test_db_worker_rides_through_an_outage_logging_it_once(monkeypatch, caplog):
    """The library's worker raising OperationalError (the database restarted) is run again once the database
    answers, after a backoff; the outage is one error line and one line when it ends."""
    from mcpsite.management.commands import db_worker

    down_for = [3]  # queries that fail before the database is back
    attempts = []

    def query(*args, **kwargs):
        if down_for[0]:
            down_for[0] -= 1
            raise OperationalError("server closed the connection unexpectedly")
        return 0

    def library_handle(self, *args, **options):
        attempts.append(options["worker_id"])
        if len(attempts) == 1:
            down_for[0] = 3
            raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(db_worker, "task_results_recover_lost", query)
    monkeypatch.setattr(library_worker.Command, "handle", library_handle)
    with caplog.at_level(logging.INFO, logger="mcpsite"):
        call_command("db_worker", "--batch", "--worker-id", "w-ride")
    assert attempts == ["w-ride"] * 2
    errors = [r for r in caplog.records if "dependency is unavailable" in r.getMessage()]
    back = [r for r in caplog.records if "are back after" in r.getMessage()]
    assert len(errors) == 2 and len(back) == 2  # two outages: before the first start, and under the worker
    assert not Heartbeat.objects.exists()  # a normal end removes the worker's heartbeat


def test_control_the_librarys_worker_alone_ends_at_the_first_outage(monkeypatch):
    def get_locked(self):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(type(DBTaskResult.objects.all()), "get_locked", get_locked)
    with pytest.raises(OperationalError):
        library_worker.Command().execute(batch=True, queue_name="*", **library_defaults())


def library_defaults():
    return {
        "verbosity": 0,
        "interval": 0,
        "backend_name": "default",
        "startup_delay": False,
        "reload": False,
        "max_tasks": None,
        "worker_id": "w-lib",
        "exclude_queues": "",
        "no_color": False,
        "force_color": False,
        "skip_checks": True,
    }


@pytest.mark.django_db(transaction=True)  # an outage drops the connections
def test_scheduler_rides_through_an_outage_logging_it_once(monkeypatch, caplog):
    from reminders.management.commands import reminders_scheduler

    ticks = []

    def sweep():
        ticks.append(1)
        if len(ticks) <= 3:
            raise OperationalError("the database system is starting up")
        return False

    monkeypatch.setattr(reminders_scheduler, "reminder_sweep_ensure", sweep)
    with caplog.at_level(logging.INFO, logger="reminders"):
        call_command("reminders_scheduler", "--once")
    assert len(ticks) == 4
    assert len([r for r in caplog.records if "dependency is unavailable" in r.getMessage()]) == 1
    assert len([r for r in caplog.records if "are back after" in r.getMessage()]) == 1


def test_readyz_reports_the_heartbeats_and_the_queue(client):
    body = client.get("/readyz").json()
    assert body["status"] == "ok" and body["checks"] == {"database": "ok", "cache": "ok"}
    assert body["background"]["task_worker"] == {"status": "missing", "alive": 0, "last_heartbeat_age_s": None}
    beat("w-1", at=timezone.now())
    beat("sched", at=timezone.now() - datetime.timedelta(minutes=5), kind=Heartbeat.Kind.SCHEDULER)
    task_row(status=TaskResultStatus.READY, worker=None, run_after=timezone.now() - datetime.timedelta(seconds=120))
    response = client.get("/readyz")
    assert response.status_code == 200
    background = response.json()["background"]
    assert background["task_worker"]["status"] == "ok" and background["task_worker"]["alive"] == 1
    assert background["scheduler"]["status"] == "stale" and background["scheduler"]["last_heartbeat_age_s"] >= 300
    assert background["queue"]["depth"] == 1 and background["queue"]["oldest_due_age_s"] >= 120


def test_readyz_says_503_naming_the_database_when_it_is_down(client, monkeypatch):
    from mcpsite import observability
    from mcpsite.mcp import views

    def down(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(views, "database_answers", down)
    monkeypatch.setattr(observability, "background_status", down)
    response = client.get("/readyz")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json()["checks"]["database"] == "error: OperationalError" and response.json()["background"] is None


def test_metrics_expose_liveness_queue_depth_and_the_oldest_due_task(client):
    beat("w-1", at=timezone.now())
    task_row(status=TaskResultStatus.READY, worker=None, run_after=timezone.now() - datetime.timedelta(seconds=60))
    task_row(status=TaskResultStatus.READY, worker=None)  # enqueued now, no run_after
    text = client.get("/metrics").content.decode()
    assert "mcpsite_database_up 1.0" in text
    assert 'mcpsite_background_processes_alive{kind="task_worker"} 1.0' in text
    assert 'mcpsite_background_processes_alive{kind="scheduler"} 0.0' in text
    assert "mcpsite_task_queue_depth 2.0" in text
    oldest = next(line for line in text.splitlines() if line.startswith("mcpsite_task_queue_oldest_due_seconds "))
    assert 60 <= float(oldest.split()[1]) < 600
