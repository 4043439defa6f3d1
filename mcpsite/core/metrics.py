"""Prometheus metrics: what operators watch (docs/operations.md lists them with alert rules).

Defined once here, recorded where each thing happens (the dispatcher, the limits, the apps' upstream clients and
deliveries), exposed at `/metrics` (mcpsite/metrics_view.py). With several processes (uvicorn --workers N, the task
worker) each process writes its values to files under `PROMETHEUS_MULTIPROC_DIR` and `/metrics` sums them
(prometheus-client's multiprocess mode; `make serve` sets the directory up). Without that variable the values live
in this process alone, which is right for `make demo` and tests.

Every label's values are bounded by the code: tool names come from the registry (anything else is "unknown"),
groups, transports, outcomes and reasons are fixed sets; never a key id, a user name or a URI.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Latency buckets in seconds: a tool call answers in milliseconds; an upstream batch may take seconds.
SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

TOOL_CALLS = Counter(
    "mcpsite_tool_calls",
    "Tool calls (and resource reads) by tool, group, transport, protocol revision and outcome.",
    ["tool", "group", "transport", "protocol", "outcome"],
)
TOOL_CALL_SECONDS = Histogram(
    "mcpsite_tool_call_seconds", "Time to answer a tool call, by tool.", ["tool"], buckets=SECONDS
)
AUDIT_ROWS_DROPPED = Counter(
    "mcpsite_audit_rows_dropped", "Audit rows dropped past MCP_AUDIT_RETAIN_ROWS while the database did not answer."
)
RATE_LIMITED = Counter("mcpsite_rate_limited", "Requests refused by a rate limit, by reason.", ["reason"])
CONFIRMATIONS = Counter(
    "mcpsite_confirmations",
    "Confirmations before an irreversible act: asked, accepted, declined, cancelled.",
    ["event"],
)
LISTEN_STREAMS = Gauge("mcpsite_listen_streams", "subscriptions/listen streams open now.", multiprocess_mode="livesum")
UPSTREAM_CALLS = Counter(
    "mcpsite_upstream_calls", "Requests to other services by service and HTTP status (or error).", ["service", "status"]
)
UPSTREAM_SECONDS = Histogram(
    "mcpsite_upstream_seconds", "Time of a request to another service.", ["service"], buckets=SECONDS
)
DELIVERIES = Counter(
    "mcpsite_deliveries", "Messages and reminders delivered by channel and outcome.", ["channel", "outcome"]
)
REMINDER_LAG_SECONDS = Histogram(
    "mcpsite_reminder_delivery_lag_seconds",
    "How late a reminder was delivered after it was due (the task worker's lag).",
    buckets=(0.5, 1, 5, 15, 30, 60, 120, 300, 900, 3600),
)
REMINDERS_DUE = Counter("mcpsite_reminders_due", "Reminder firings found due by the scheduler.")
WORKER_THREADS_BUSY = Gauge(
    "mcpsite_worker_threads_busy", "Worker threads running a tool now, by pool.", ["pool"], multiprocess_mode="livesum"
)
DB_POOL_CONNECTIONS = Gauge(
    "mcpsite_db_pool_connections",
    "PostgreSQL pool connections in use (sampled) in each process.",
    ["state"],
    multiprocess_mode="livesum",
)


def tool_call(*, tool: str, group: str, transport: str, protocol: str, outcome: str, seconds: float) -> None:
    TOOL_CALLS.labels(tool, group, transport, protocol, outcome).inc()
    TOOL_CALL_SECONDS.labels(tool).observe(seconds)


def rate_limited(reason: str) -> None:
    RATE_LIMITED.labels(reason).inc()


def confirmation(event: str) -> None:
    CONFIRMATIONS.labels(event).inc()


def upstream_call(*, service: str, status: str, seconds: float) -> None:
    UPSTREAM_CALLS.labels(service, status).inc()
    UPSTREAM_SECONDS.labels(service).observe(seconds)


def delivery(*, channel: str, outcome: str) -> None:
    DELIVERIES.labels(channel, outcome).inc()
