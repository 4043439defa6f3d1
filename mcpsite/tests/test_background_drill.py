"""The drill of docs/operations.md: a PostgreSQL of the test's own restarted (`pg_ctl stop -m fast`, then start)
under a running `db_worker` and `reminders_scheduler`. Both stay up, log the outage once, and deliver what is sent
after it; SIGTERM then ends them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .live import PYTHON, ROOT, LiveSite, _base_env, free_port

pytestmark = pytest.mark.postgres

SEND = (
    "from django.contrib.auth.models import User; from reminders.models import Contact; "
    "from reminders import services; "
    "u, _ = User.objects.get_or_create(username='drill', defaults={'email': 'drill@example.com'}); "
    "Contact.objects.get_or_create(owner=u, name='Hanako', email='hanako@example.com'); "
    "print(services.message_send(owner=u, to='Hanako', text=TEXT).public_id)"
)


class OwnPostgres:
    """A throwaway cluster (scripts/testpg) on a port of its own, so restarting it disturbs no other test."""

    def __init__(self) -> None:
        self.port = free_port()
        self.env = {**os.environ, "TESTPG_PORT": str(self.port)}

    def testpg(self, *args: str) -> str:
        result = subprocess.run(
            [ROOT / "scripts/testpg", *args], env=self.env, capture_output=True, text=True, timeout=120, check=True
        )
        return result.stdout.strip()

    def restart(self, *, down_for: float) -> None:
        self.testpg("stop")
        time.sleep(down_for)
        self.testpg("start")


@pytest.fixture
def own_postgres():
    pg = OwnPostgres()
    pg.testpg("start")
    try:
        yield pg
    finally:
        pg.testpg("stop")
        shutil.rmtree(f"/tmp/mcpsite-testpg-{pg.port}", ignore_errors=True)


def wait_for(what, predicate, *, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except Exception:  # noqa: BLE001 - the database may be restarting; ask again
            pass
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def test_worker_and_scheduler_ride_through_a_database_restart(own_postgres, tmp_path):
    env = {**_base_env(), "MCPSITE_VAR_DIR": str(tmp_path), "DATABASE_URL": own_postgres.testpg("url", "postgres")}
    site = LiveSite(env=env)
    site.manage("migrate", "--noinput", "-v", "0")
    logs = {name: tmp_path / f"{name}.log" for name in ("worker", "scheduler")}
    commands = {
        "worker": ["db_worker", "--queue-name", "*", "--interval", "0.2", "--no-startup-delay", "-v", "0"],
        "scheduler": ["reminders_scheduler", "--interval", "1"],
    }
    processes = {
        name: subprocess.Popen(  # noqa: S603 - our own manage.py
            [PYTHON, "manage.py", *command],
            cwd=ROOT,
            env=env,
            stdout=logs[name].open("w"),
            stderr=subprocess.STDOUT,
        )
        for name, command in commands.items()
    }
    try:
        site.shell(SEND.replace("TEXT", repr("before")))
        wait_for("the first message", lambda: site.count("reminders_message", status="sent") == 1)
        wait_for("both heartbeats", lambda: site.count("mcpsite_heartbeat") == 2)

        # Down for longer than the pool waits for a connection (10 s): each process meets the outage
        own_postgres.restart(down_for=12)
        site.shell(SEND.replace("TEXT", repr("after")))
        wait_for("the message sent after the restart", lambda: site.count("reminders_message", status="sent") == 2)
        assert {name: p.poll() for name, p in processes.items()} == {"worker": None, "scheduler": None}
        wait_for("both heartbeats again", lambda: site.count("mcpsite_heartbeat") == 2)
        for name, log in logs.items():  # a process may still be in its backoff: its next attempt ends the outage
            wait_for(f"the {name} back", lambda log=log: "are back after" in log.read_text())
        assert site.count("django_tasks_database_dbtaskresult", status="RUNNING") == 0

        for process in processes.values():
            process.send_signal(signal.SIGTERM)
        codes = {name: p.wait(timeout=30) for name, p in processes.items()}
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
    texts = {name: Path(log).read_text() for name, log in logs.items()}
    assert codes == {"worker": 0, "scheduler": 0}, texts
    for name, text in texts.items():
        # One line when the outage begins, one when it ends: no traceback, no line per attempt.
        lines = text.splitlines()
        assert len(lines) == 2, (name, text)
        assert "a dependency is unavailable" in lines[0] and "are back after" in lines[1], (name, text)
