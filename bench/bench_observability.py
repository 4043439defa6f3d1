"""The cost of metrics and tracing: `tools/call get_seat_availability` over `/mcp` with them on ÷ off.

Off: the in-process metrics alone and no tracer (`make demo`). On: the metrics written to multiprocess files
(PROMETHEUS_MULTIPROC_DIR, as `make serve` runs), then with traces exported over OTLP/HTTP to a sink on loopback
(OTEL_EXPORTER_OTLP_ENDPOINT): with mcpsite's default sampler (OTEL_TRACES_SAMPLER unset: a 10 % sample of the
requests that bring no sampled `traceparent`, as these do not), and with every request traced
(OTEL_TRACES_SAMPLER=parentbased_always_on). One uvicorn worker each, on SQLite or PostgreSQL, 16 wrk connections,
alternating rounds; the server's CPU per request beside the rates (the shared cores move the rates more than the
CPU). Goal: on ÷ off ≥ 0.95.

    .venv/bin/python bench/bench_observability.py [--seconds 8] [--rounds 3] [--database sqlite|postgres]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_serving import CALL, MCP_HEADERS, Run, Server, prepare, site_env, start_postgres, wrk, wrk_with_cpu  # noqa: E402


class Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that accepts every export (what a collector costs the site is the export itself), on
    kept-alive connections as a collector's."""

    protocol_version = "HTTP/1.1"

    def do_POST(self):  # noqa: N802
        self.received(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def received(self, body: bytes) -> None:
        """What the sink does with an export's body: nothing."""

    def log_message(self, *args):
        pass


def start_site(database: str, sink: type[Sink] = Sink) -> tuple[ThreadingHTTPServer, dict, str]:
    """The OTLP sink on loopback, the site's environment (`database`: sqlite or postgres) without any OTEL_ or
    PROMETHEUS_ variable, migrated and seeded, and an API key for the load."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {k: v for k, v in site_env(start_postgres() if database == "postgres" else None).items()
           if not k.startswith(("OTEL_", "PROMETHEUS_"))}  # fmt: skip
    return server, env, prepare(env)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    sink, env, key = start_site(args.database)
    metrics = {**env, "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="bench-metrics-")}
    sampled = {**metrics, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink.server_address[1]}"}
    every = {**sampled, "OTEL_TRACES_SAMPLER": "parentbased_always_on"}
    configs = {
        "off (make demo)": env,
        "metrics": metrics,
        "metrics + traces, default 10 % sample": sampled,
        "metrics + traces, every request": every,
    }
    servers = {name: Server(config, "mcpsite.asgi:application") for name, config in configs.items()}
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {key}"}
    runs: dict[str, list[Run]] = {name: [] for name in configs}
    try:
        for server in servers.values():
            wrk(f"{server.url}/mcp", CALL, headers, 2)  # warm-up
        for round_ in range(args.rounds):
            for name, server in servers.items():
                runs[name].append(wrk_with_cpu(server, "/mcp", CALL, headers, args.seconds))
            print(f"  round {round_ + 1}/{args.rounds} done", flush=True)
    finally:
        for server in servers.values():
            server.stop()
        sink.shutdown()
    rate = {name: statistics.median(run.rate for run in values) for name, values in runs.items()}
    cpu = {name: statistics.median(run.server_cpu for run in values) for name, values in runs.items()}
    off = next(iter(configs))
    print(f"tools/call over /mcp, {args.database}, median of {args.rounds} alternating rounds (goal: on ÷ off ≥ 0.95)")
    for name in configs:
        print(f"  {name:<38} {rate[name]:7.1f} req/s  CPU {cpu[name]:.2f} ms/request  ÷ off: rate "
              f"{rate[name] / rate[off]:.2f}x, CPU {cpu[off] / cpu[name]:.2f}x", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
