"""scripts/serve, as docs/production.md runs it: it sets PROMETHEUS_MULTIPROC_DIR itself, never empties it under
the site's other processes (the task worker's metrics are summed in), and live gauges of dead processes are
forgotten; on SIGTERM a call in flight finishes, and the server exits within its graceful timeout even when a call
does not."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx2
import pytest

from geo.tests.fake_galuchat import PATHS, answer_for
from mcpsite import observability

from .live import PYTHON, LoopbackUpstream, live_site, loopback_upstream
from .test_proxy_headers import serve

WORKER_DELIVERIES = """
from prometheus_client import Counter, Gauge
Counter("mcpsite_deliveries", "", ["channel", "outcome"]).labels("email", "sent").inc(3)
Gauge("mcpsite_listen_streams", "", multiprocess_mode="livesum").set(7)
"""


class _SlowGaluchat(LoopbackUpstream):
    """Answers after `delay` seconds: a call in flight for as long as a test needs."""

    delay = 3.0

    def do_POST(self):  # noqa: N802  (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(type(self).delay)
        answer = answer_for(PATHS[self.path.split("?", 1)[0]], [tuple(p) for p in body["points"]])
        self.reply(200, json.dumps(answer).encode())


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    with (
        loopback_upstream(_SlowGaluchat) as galuchat,
        live_site(live_template, tmp_path_factory.mktemp("serve")) as site,
    ):
        site.env.update(GALUCHAT_BASE_URL=galuchat, GRACEFUL_SHUTDOWN_SECONDS="4")
        yield site


def in_background(work) -> tuple[threading.Thread, list]:
    """`work(results)` in a thread; an HTTP error it raises is appended to `results` too."""
    results: list = []

    def run() -> None:
        try:
            work(results)
        except httpx2.HTTPError as exc:
            results.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, results


def call_in_background(url: str, key: str) -> tuple[threading.Thread, list]:
    """resolve_points over /rpc in a thread (the upstream makes it slow); the list gets its response or error."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "resolve_points", "params": {"points": [{"lat": 35, "lon": 139}]}}
    headers = {"Authorization": f"Bearer {key}"}
    return in_background(
        lambda results: results.append(httpx2.post(f"{url}/rpc", json=body, headers=headers, timeout=60))
    )


def test_sigterm_lets_a_call_in_flight_finish_and_refuses_new_ones(site):
    _SlowGaluchat.delay = 2.5
    url = serve(site)
    server = site.processes[-1]
    thread, outcome = call_in_background(url, site.key)
    time.sleep(1)  # the call is waiting on the upstream
    server.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    with pytest.raises(httpx2.HTTPError):
        httpx2.get(f"{url}/healthz", timeout=2)  # no longer accepting
    thread.join(30)
    (response,) = outcome
    assert response.status_code == 200 and "result" in response.json(), response.text
    # uvicorn re-raises the signal once it has shut down; systemd counts an end by SIGTERM as clean
    assert server.wait(timeout=10) in (0, -signal.SIGTERM)


def test_sigterm_ends_the_server_within_its_graceful_timeout_when_a_call_does_not_finish(site):
    _SlowGaluchat.delay = 30.0  # far longer than GRACEFUL_SHUTDOWN_SECONDS (4)
    url = serve(site)
    server = site.processes[-1]
    thread, _outcome = call_in_background(url, site.key)
    time.sleep(1)
    started = time.monotonic()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=20)
    assert time.monotonic() - started < 4 + 5
    thread.join(60)


def listen_in_background(url: str, key: str) -> tuple[threading.Thread, list]:
    """A 2026-07-28 `subscriptions/listen` stream in a thread; the list gets each SSE data line, then "closed"."""
    from .modern import envelope, routing_headers

    message = envelope("L", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    headers = {k.decode(): v.decode() for k, v in routing_headers(message)}
    headers.update({"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"})

    def listen(lines: list) -> None:
        with httpx2.stream("POST", f"{url}/mcp", json=message, headers=headers, timeout=60) as response:
            lines.extend(json.loads(line[5:]) for line in response.iter_lines() if line.startswith("data:"))
        lines.append("closed")

    return in_background(listen)


def test_sigterm_ends_listen_streams_with_their_result_and_lets_calls_finish(site):
    """A listen stream may live an hour: SIGTERM ends it at once with the listen result (the client re-listens
    elsewhere), the call in flight still answers, and the server exits well within its graceful timeout."""
    _SlowGaluchat.delay = 2.0
    url = serve(site)
    server = site.processes[-1]
    listening, lines = listen_in_background(url, site.key)
    time.sleep(1.5)  # acknowledged and open
    calling, outcome = call_in_background(url, site.key)
    time.sleep(0.5)
    started = time.monotonic()
    server.send_signal(signal.SIGTERM)
    listening.join(10)
    assert lines[-1] == "closed" and lines[-2]["id"] == "L" and "result" in lines[-2], lines
    calling.join(30)
    assert outcome[0].status_code == 200 and "result" in outcome[0].json()
    assert server.wait(timeout=20) in (0, -signal.SIGTERM)
    assert time.monotonic() - started < 4  # GRACEFUL_SHUTDOWN_SECONDS: the stream did not hold it up


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
