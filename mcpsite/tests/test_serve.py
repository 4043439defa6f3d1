"""scripts/serve, as docs/production.md runs it: it sets PROMETHEUS_MULTIPROC_DIR itself, never empties it under
the site's other processes (the task worker's metrics are summed in), and live gauges of dead processes are
forgotten."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx2
import pytest

from mcpsite import observability

from .live import PYTHON, live_site
from .test_proxy_headers import serve

WORKER_DELIVERIES = """
from prometheus_client import Counter, Gauge
Counter("mcpsite_deliveries", "", ["channel", "outcome"]).labels("email", "sent").inc(3)
Gauge("mcpsite_listen_streams", "", multiprocess_mode="livesum").set(7)
"""


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    with live_site(live_template, tmp_path_factory.mktemp("serve")) as site:
        yield site


def test_serve_sums_the_task_workers_metrics_and_keeps_its_files(site):
    directory = Path(site.env["MCPSITE_VAR_DIR"]) / "metrics"
    directory.mkdir(exist_ok=True)
    # What a task worker with the same directory leaves there: a counter, and a live gauge of a process now gone.
    subprocess.run(
        [PYTHON, "-c", WORKER_DELIVERIES],
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)},
        check=True,
        timeout=60,
    )
    files = {path.name for path in directory.glob("*.db")}
    url = serve(site)  # PROMETHEUS_MULTIPROC_DIR unset: scripts/serve sets it
    text = httpx2.get(f"{url}/metrics", timeout=30).text
    assert 'mcpsite_deliveries_total{channel="email",outcome="sent"} 3.0' in text
    assert "mcpsite_listen_streams 7.0" not in text  # the dead process's live gauge was forgotten at start
    kept = {path.name for path in directory.glob("*.db")}
    assert {name for name in files if name.startswith("counter_")} <= kept


def test_live_gauges_of_dead_processes_are_forgotten_and_the_living_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    dead = subprocess.run([PYTHON, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    for pid in (dead_pid, os.getpid()):
        (tmp_path / f"gauge_livesum_{pid}.db").write_bytes(b"")
        (tmp_path / f"counter_{pid}.db").write_bytes(b"")
    assert observability.forget_dead_processes() == [dead_pid]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [f"counter_{dead_pid}.db", f"counter_{os.getpid()}.db", f"gauge_livesum_{os.getpid()}.db"]
    )
