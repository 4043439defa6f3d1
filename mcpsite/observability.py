"""`GET /metrics`: the Prometheus exposition of mcpsite/core/metrics.py, for the scraper alone; the background
processes' liveness and the task queue, read from the database at each scrape; `GET /readyz`: /healthz's checks
plus the same background state; and the sampler of what no request records (the database pool's connections in
use).

Allowed for a request bearing `METRICS_TOKEN` (`Authorization: Bearer …`), or coming from an address in
`METRICS_ALLOWED_IPS` (default: loopback, where a Prometheus beside the site scrapes); anyone else is refused with
403 and nothing about the site. With `PROMETHEUS_MULTIPROC_DIR` set, the values of every process that writes there
(each uvicorn worker, the task worker) are summed, whichever process answers.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.crypto import constant_time_compare
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector

from .core import metrics as site_metrics
from .core.outage import DEPENDENCY_ERRORS
from .mcp.auth import bearer_token
from .mcp.views import healthz
from .selectors import BackgroundStatus, background_status
from .services import HEARTBEAT_STALE

logger = logging.getLogger("mcpsite")
SAMPLE_SECONDS = 5.0


def scrape_allowed(request: HttpRequest) -> bool:
    token = bearer_token(request.META.get("HTTP_AUTHORIZATION"))
    if settings.METRICS_TOKEN and token is not None:
        return constant_time_compare(token, settings.METRICS_TOKEN)
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(address in network for network in settings.METRICS_ALLOWED_NETWORKS)


class BackgroundCollector(Collector):
    """The task workers' and the scheduler's liveness and the task queue, read from the database when scraped (so
    one value for the site, whichever process answers, never a sum over processes)."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("mcpsite_database_up", "1 when the database answered this scrape's queries, else 0.")
        try:
            status = background_status(stale=HEARTBEAT_STALE)
        except DEPENDENCY_ERRORS:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        alive = GaugeMetricFamily(
            "mcpsite_background_processes_alive",
            "Background processes (task workers, schedulers) that beat within the stale bound, by kind.",
            labels=["kind"],
        )
        age = GaugeMetricFamily(
            "mcpsite_background_heartbeat_age_seconds",
            "Seconds since the newest heartbeat of a background process of this kind.",
            labels=["kind"],
        )
        for kind in status.processes:
            alive.add_metric([kind.kind], kind.alive)
            if kind.last_beat_age is not None:
                age.add_metric([kind.kind], kind.last_beat_age)
        yield alive
        yield age
        yield GaugeMetricFamily(
            "mcpsite_task_queue_depth", "Task rows due now and waiting for a worker.", value=status.queue_depth
        )
        yield GaugeMetricFamily(
            "mcpsite_task_queue_oldest_due_seconds",
            "Seconds the oldest waiting task has been due (0 when none waits).",
            value=status.oldest_due_age,
        )
        yield GaugeMetricFamily("mcpsite_tasks_running", "Task rows a worker holds now.", value=status.running)


class _Forward(Collector):
    def __init__(self, source: CollectorRegistry) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        yield from self.source.collect()


def registry() -> CollectorRegistry:
    merged = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        MultiProcessCollector(merged)
    else:
        merged.register(_Forward(REGISTRY))
    merged.register(BackgroundCollector())
    return merged


def background_report(status: BackgroundStatus) -> dict[str, Any]:
    """/readyz's `background` object: each kind of process ok, stale or missing, and the task queue."""
    report: dict[str, Any] = {}
    for kind in status.processes:
        state = "missing" if kind.last_beat_age is None else "ok" if kind.alive else "stale"
        age = None if kind.last_beat_age is None else round(kind.last_beat_age, 1)
        report[kind.kind] = {"status": state, "alive": kind.alive, "last_heartbeat_age_s": age}
    report["queue"] = {
        "depth": status.queue_depth,
        "oldest_due_age_s": round(status.oldest_due_age, 1),
        "running": status.running,
    }
    return report


@require_GET
def readyz(request: HttpRequest) -> HttpResponse:
    """/healthz's database and cache checks (503 naming the one that fails), plus the background processes'
    heartbeats and the task queue. A stale worker or scheduler is reported, not a 503: the web process can still
    serve, and taking it out of a load balancer would not bring the worker back (the alert rules do that)."""
    health = healthz(request)
    body = json.loads(health.content)
    try:
        body["background"] = background_report(background_status(stale=HEARTBEAT_STALE))
    except DEPENDENCY_ERRORS:
        body["background"] = None  # the database check above names the outage
    response = JsonResponse(body, status=health.status_code)
    if health.status_code == 503:
        response["Retry-After"] = "5"
    return response


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    if not scrape_allowed(request):
        return HttpResponse("Forbidden\n", status=403, content_type="text/plain")
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)


def sample_database_pool() -> None:
    """Record this process's PostgreSQL pool: connections in use and idle (nothing without a pool)."""
    pool = getattr(connections["default"], "pool", None)  # Django's native pool (DATABASES OPTIONS "pool")
    if pool is None:
        return
    stats = pool.get_stats()
    size, idle = stats.get("pool_size", 0), stats.get("pool_available", 0)
    site_metrics.DB_POOL_CONNECTIONS.labels("in_use").set(size - idle)
    site_metrics.DB_POOL_CONNECTIONS.labels("idle").set(idle)


def start_sampler(stop: threading.Event) -> threading.Thread:
    """A daemon thread sampling every SAMPLE_SECONDS until `stop` is set (the ASGI lifespan's end); first, the live
    gauges of processes that died without their normal end are forgotten."""
    forget_dead_processes()

    def run() -> None:
        while not stop.wait(SAMPLE_SECONDS):
            try:
                sample_database_pool()
            except Exception:  # a failed sample must never end the process's sampling
                logger.debug("Could not sample the database pool", exc_info=True)

    thread = threading.Thread(target=run, name="mcpsite-metrics-sampler", daemon=True)
    thread.start()
    return thread


LIVE_GAUGE_FILE = re.compile(r"gauge_live\w*_(\d+)\.db")


def forget_dead_processes() -> list[int]:
    """Remove the live gauges of the processes that are gone (killed outright, so `process_ended` never ran for
    them), as prometheus-client's `mark_process_dead` does for each; returns their pids. The directory is never
    emptied: other processes of the site write there. Counters and histograms of ended processes stay, so the
    sums never go down."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        return []
    dead = set()
    for path in Path(directory).glob("gauge_live*_*.db"):
        if (match := LIVE_GAUGE_FILE.fullmatch(path.name)) is None:
            continue
        pid = int(match[1])
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            dead.add(pid)
        except PermissionError:
            pass  # alive, under another user
    for pid in dead:
        mark_process_dead(pid)
    return sorted(dead)


def process_ended() -> None:
    """At a process's normal end: its live gauges (streams open, threads busy, pool) stop counting in the sum."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        mark_process_dead(os.getpid())
