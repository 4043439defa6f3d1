"""`GET /metrics`: the Prometheus exposition of mcpsite/core/metrics.py, for the scraper alone; and the sampler of
what no request records (the database pool's connections in use).

Allowed for a request bearing `METRICS_TOKEN` (`Authorization: Bearer …`), or coming from an address in
`METRICS_ALLOWED_IPS` (default: loopback, where a Prometheus beside the site scrapes); anyone else is refused with
403 and nothing about the site. With `PROMETHEUS_MULTIPROC_DIR` set, the values of every process that writes there
(each uvicorn worker, the task worker) are summed, whichever process answers.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import threading

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse
from django.utils.crypto import constant_time_compare
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from .core import metrics as site_metrics
from .mcp.auth import bearer_token

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


def registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        merged = CollectorRegistry()
        MultiProcessCollector(merged)
        return merged
    return REGISTRY


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
    """A daemon thread sampling every SAMPLE_SECONDS until `stop` is set (the ASGI lifespan's end)."""

    def run() -> None:
        while not stop.wait(SAMPLE_SECONDS):
            try:
                sample_database_pool()
            except Exception:  # a failed sample must never end the process's sampling
                logger.debug("Could not sample the database pool", exc_info=True)

    thread = threading.Thread(target=run, name="mcpsite-metrics-sampler", daemon=True)
    thread.start()
    return thread


def process_ended() -> None:
    """At a process's normal end: its live gauges (streams open, threads busy, pool) stop counting in the sum."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        mark_process_dead(os.getpid())
