"""Instructions per `tools/call get_seat_availability` over `/mcp` by callgrind, with metrics and tracing off and on.

The site runs in one process under `valgrind --tool=callgrind` and is called through its ASGI application (no
uvicorn): 30 calls to warm up, the counters zeroed, then 100 calls and the batch span processor's flush, dumped.
Spans go to an OTLP/HTTP sink in another process and are exported at the batch processor's batch size or at that
flush, as at production rates (OTEL_BSP_SCHEDULE_DELAY is set past the run: under callgrind the clock runs ~50x
slower, which would export each few spans on its own). One tool thread and the audit rows written by count (not by
the clock): so instruction counts repeat from run to run whatever else the machine runs, and decide where the rates
of bench_observability.py cannot.

    .venv/bin/python bench/callgrind_observability.py [--calls 100] [--database sqlite|postgres] [--only NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_observability import Sink, start_site  # noqa: E402

WARM_UP = 30


def inner(calls: int, key: str) -> None:
    """In the process under callgrind: the site's ASGI application, called directly."""
    from bench_serving import CALL, MCP_HEADERS

    from mcpsite import tracing

    body = json.dumps(CALL).encode()
    headers = [(k.lower().encode(), v.encode()) for k, v in MCP_HEADERS.items()]
    headers += [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Bearer {key}".encode()),
                (b"content-length", str(len(body)).encode()), (b"user-agent", b"wrk")]  # fmt: skip

    def counted(option: str) -> None:
        tracing.force_flush()
        control(option)

    asgi_calls("/mcp", headers, body, calls, lambda: counted("-z"), lambda: counted("-d"))


def asgi_calls(path: str, headers: list, body: bytes, calls: int, before: Callable, after: Callable) -> None:
    """The site's ASGI application (lifespan started) called WARM_UP times, then `before()`, `calls` counted calls
    (each must answer 200) and `after()`."""
    import mcpsite.asgi

    app = mcpsite.asgi.application
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000)}  # fmt: skip

    async def call() -> None:
        sent = False
        status = []

        async def receive():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()

        async def send(message):
            if message["type"] == "http.response.start":
                status.append(message["status"])

        await app(dict(scope), receive, send)
        assert status == [200], status

    async def main() -> None:
        queue: asyncio.Queue = asyncio.Queue()
        started = asyncio.Event()

        async def lifespan_send(message):
            if message["type"] == "lifespan.startup.complete":
                started.set()
            elif message["type"] == "lifespan.startup.failed":
                raise SystemExit(message["message"])

        lifespan = asyncio.create_task(app({"type": "lifespan"}, queue.get, lifespan_send))
        await queue.put({"type": "lifespan.startup"})
        await started.wait()
        for _ in range(WARM_UP):
            await call()
        before()
        for _ in range(calls):
            await call()
        after()
        await queue.put({"type": "lifespan.shutdown"})
        await lifespan

    asyncio.run(main())


def control(option: str) -> None:
    """callgrind_control on this process (zero the counters, or dump them)."""
    subprocess.run(["callgrind_control", option, str(os.getpid())], check=True, capture_output=True)


def instructions(out_file: str) -> int:
    """The instruction total of the dump callgrind_control made (the files ending in .1, one per thread with
    --threads)."""
    dumps = [Path(out_file + ".1"), *Path(out_file).parent.glob(Path(out_file).name + ".1-*")]
    texts = [dump.read_text() for dump in dumps if dump.exists()]
    return sum(int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1)) for text in texts)


class CountingSink(Sink):
    """The OTLP/HTTP sink, counting the spans it receives by their instrumentation scope."""

    spans: Counter = Counter()

    def received(self, body: bytes) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                self.spans[scope.scope.name] += len(scope.spans)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--only", action="append", help="run only the configurations whose name contains this")
    parser.add_argument("--keep", help="keep the callgrind files in this directory (for callgrind_annotate)")
    parser.add_argument("--threads", action="store_true", help="one callgrind file per thread (--separate-threads)")
    args = parser.parse_args()
    sink, env, key = start_site(args.database, CountingSink)
    # What runs by the wall clock would make the count depend on how fast valgrind runs on a shared machine: one
    # tool thread (a new pool thread opens its own database connection when the pool grows), and the audit rows
    # written by count (every 100 calls, inside the call that fills the buffer) instead of every second.
    env.update(MCP_TOOL_THREADS="1", MCP_AUDIT_FLUSH_SECONDS="100000", MCP_AUDIT_BUFFER_ROWS="100")
    metrics = {**env, "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="bench-metrics-")}
    sampled = {**metrics, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink.server_address[1]}",
               "OTEL_BSP_SCHEDULE_DELAY": "100000000"}  # fmt: skip
    every = {**sampled, "OTEL_TRACES_SAMPLER": "parentbased_always_on"}
    left_out = {**sampled, "OTEL_TRACES_SAMPLER": "parentbased_always_off"}  # what a request left out costs
    configs = {
        "off": env,
        "metrics": metrics,
        "traces-default": sampled,
        "traces-every": every,
        "traces-left-out": left_out,
    }
    if args.only:
        configs = {name: config for name, config in configs.items() if any(part in name for part in args.only)}
    out_dir = args.keep or tempfile.mkdtemp(prefix="callgrind-")
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    results = {}
    for name, config in configs.items():
        out_file = f"{out_dir}/callgrind.{name}"
        for old in Path(out_dir).glob(f"callgrind.{name}*"):
            old.unlink()
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
                   *(["--separate-threads=yes"] if args.threads else []), sys.executable,
                   __file__, "--inner", str(args.calls), key]  # fmt: skip
        CountingSink.spans.clear()
        done = subprocess.run(command, env=config, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(done.stderr[-3000:])
        results[name] = instructions(out_file) / args.calls
        spans = ", ".join(f"{scope} {count}" for scope, count in sorted(CountingSink.spans.items()))
        print(f"  {name:<16} {results[name] / 1e6:6.2f} M instructions per call; spans exported: {spans or 'none'}",
              flush=True)  # fmt: skip
    sink.shutdown()
    if "off" in results:
        for name, value in results.items():
            print(f"  {name:<16} off ÷ on {results['off'] / value:.3f}")
    print(f"callgrind files: {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--inner":
        inner(int(sys.argv[2]), sys.argv[3])
    else:
        main()
