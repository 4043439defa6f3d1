"""Serving benchmark: real uvicorn processes over HTTP, 16 concurrent connections from `wrk`.

1. `tools/call get_seat_availability` over MCP Streamable HTTP (`/mcp`, the site as deployed: API key, rate limit,
   audit row) ÷ the same tool function behind a bare ASGI handler (bench/serving_bare_asgi.py), on SQLite and on
   PostgreSQL, for each protocol revision: 2025-11-25 (the client's `initialize` handshake first, then the calls),
   and 2026-07-28 (stateless: no handshake) in its default SSE mode (a JSON body unless the handler notifies) and in
   JSON-response mode (MCP_MODERN_JSON_RESPONSE=1). Runs alternate (bare, each MCP variant, bare, ...); each
   round's MCP rate is divided by that round's bare rate, and the median of those ratios is printed.
2. The server process's CPU time per request on each path, and bare ÷ MCP of it (the goal holds both): on cores
   shared with other jobs the rates swing with the machine's load, the CPU a request costs much less.
3. That the load generator is not the bottleneck: wrk's own CPU time per request and the share of a core it used,
   beside the server's (a CPU-bound server is busy about one core), and wrk's ceiling against an ASGI handler that
   does nothing.
4. Scale-out: the MCP path at 2 uvicorn workers ÷ 1 worker, on PostgreSQL with the limits in Redis.

PostgreSQL is a cluster of its own with the durable defaults (fsync, synchronous_commit on), not the test
cluster (fsync off), and Redis a private redis-server; both are removed at exit.

    .venv/bin/python bench/bench_serving.py [--seconds 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import cpu_seconds, start_redis  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
CONNECTIONS = 16
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_seat_availability", "arguments": {"schedule_id": "s001"}}}  # fmt: skip
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}  # fmt: skip
# The same call on 2026-07-28: the per-request envelope in `_meta` and the routing headers.
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
MODERN_CALL = {**CALL, "params": {**CALL["params"], "_meta": ENVELOPE}}
MODERN_HEADERS = {**MCP_HEADERS, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                  "Mcp-Name": "get_seat_availability"}  # fmt: skip
_cleanups: list = []
atexit.register(lambda: [fn() for fn in reversed(_cleanups)])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def start_postgres() -> str:
    """A throwaway cluster with PostgreSQL's durable defaults; returns its URL."""
    bins = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))
    if not bins:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql)")
    pg, data, port = bins[-1], tempfile.mkdtemp(prefix="bench-serving-pg-"), free_port()
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
    subprocess.run(as_postgres([str(pg / "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                                "--locale=C.UTF-8"]), check=True, capture_output=True)  # fmt: skip
    subprocess.run(as_postgres([str(pg / "pg_ctl"), "-D", data, "-l", f"{data}/log", "-w", "-o",
                                f"-p {port} -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=200", "start"]),
                   check=True, capture_output=True)  # fmt: skip

    def stop():
        subprocess.run(as_postgres([str(pg / "pg_ctl"), "-D", data, "-m", "immediate", "stop"]), capture_output=True)
        shutil.rmtree(data, ignore_errors=True)

    _cleanups.append(stop)
    subprocess.run(as_postgres([str(pg / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "bench"]),
                   check=True)  # fmt: skip
    return f"postgres://postgres@127.0.0.1:{port}/bench"


def site_env(database_url: str | None, redis_url: str | None = None) -> dict:
    var_dir = tempfile.mkdtemp(prefix="bench-serving-")
    _cleanups.append(lambda: shutil.rmtree(var_dir, ignore_errors=True))
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "CACHE_URL"}}
    env.update(MCPSITE_VAR_DIR=var_dir, LOG_LEVEL="WARNING", PYTHONPATH=str(ROOT))
    if database_url:
        env["DATABASE_URL"] = database_url
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def manage(env: dict, *args: str) -> str:
    done = subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def prepare(env: dict) -> str:
    """migrate (nothing else: the cache table comes with it), seed cinema, and a key with room for the load."""
    manage(env, "migrate", "--noinput", "-v", "0")
    manage(env, "seed_cinema")
    return manage(env, "create_api_key", "--name", f"bench-{time.time_ns()}", "--scopes", "cinema",
                  "--rate", "100000000/m", "--quiet").strip()  # fmt: skip


class Server:
    def __init__(self, env: dict, app: str, workers: int = 1, python: str = PYTHON):
        """uvicorn serving `app` (a module of bench/ or the site's), run by `python` (a peer's own virtualenv)."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [python, "-m", "uvicorn", app, "--app-dir", str(ROOT / "bench"), "--host", "127.0.0.1",
                "--port", str(self.port), "--workers", str(workers), "--lifespan", "on", "--no-access-log",
                "--log-level", "warning"]  # fmt: skip
        self.proc = subprocess.Popen(args, cwd=ROOT, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.2)
        raise SystemExit(f"{app} did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


@dataclass(frozen=True)
class Run:
    """One wrk run against one server: requests per second, and CPU milliseconds per request of the server process
    and of wrk; `server_busy` and `wrk_busy`: the share of one core each used over the run."""

    rate: float
    server_cpu: float
    wrk_cpu: float
    server_busy: float
    wrk_busy: float


def wrk_with_cpu(server: Server, path: str, body: dict | None, headers: dict, seconds: int) -> Run:
    """A wrk run with the CPU it cost the server and wrk: the rate depends on what else the shared cores run at the
    time, the CPU each request costs much less."""
    before, wrk_before = cpu_seconds(server.proc.pid), _children_cpu_seconds()
    started = time.monotonic()
    rate = wrk(f"{server.url}{path}", body, headers, seconds)
    elapsed = time.monotonic() - started
    server_cpu, wrk_cpu = cpu_seconds(server.proc.pid) - before, _children_cpu_seconds() - wrk_before
    requests = rate * seconds
    return Run(rate, 1000 * server_cpu / requests, 1000 * wrk_cpu / requests, server_cpu / elapsed, wrk_cpu / elapsed)


def _children_cpu_seconds() -> float:
    """User + system CPU time of this process's reaped children so far (each wrk run is one)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wrk(url: str, body: dict | None, headers: dict, seconds: int) -> float:
    """Requests per second; any non-2xx answer or socket error fails the benchmark."""
    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(json.dumps(body or {}))}"]
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write("\n".join(lines) + "\n")
    try:
        command = ["wrk", "-t", "2", "-c", str(CONNECTIONS), "-d", f"{seconds}s", "--timeout", "10s", "-s", script.name]
        out = subprocess.run([*command, url],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    finally:
        os.unlink(script.name)
    if "Non-2xx" in out or "Socket errors" in out:
        raise SystemExit(f"wrk saw failures against {url}:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def json_answer(answer: httpx2.Response) -> dict:
    if answer.headers["content-type"].startswith("text/event-stream"):
        return json.loads(next(line[5:] for line in answer.text.splitlines() if line.startswith("data:")))
    return answer.json()


def handshake(mcp: Server, key: str | None, mcp_headers: dict) -> dict:
    """A 2025-11-25 client's start: `initialize`, then `notifications/initialized`. Returns the headers its calls
    carry: the bearer key (none for a server without auth: key None) and, where the server keeps sessions
    (MCP_STATELESS_HTTP=0), the session it opened."""
    headers = {**mcp_headers, **({"Authorization": f"Bearer {key}"} if key else {})}
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "bench_serving", "version": "1"}}}  # fmt: skip
    answer = httpx2.post(f"{mcp.url}/mcp", json=initialize, headers=headers, timeout=30)
    assert json_answer(answer)["result"]["protocolVersion"] == "2025-11-25", answer.text[:300]
    if session := answer.headers.get("mcp-session-id"):
        headers["Mcp-Session-Id"] = session
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(f"{mcp.url}/mcp", json=initialized, headers=headers, timeout=30).status_code == 202
    return headers


def check_answers(bare: Server, mcp: Server, call: dict, headers: dict) -> None:
    """One call each way, so the load measures real answers (not fast errors)."""
    plain = httpx2.post(f"{bare.url}/", json=CALL["params"]["arguments"]).json()
    answer = httpx2.post(f"{mcp.url}/mcp", json=call, headers=headers, timeout=30)
    result = json_answer(answer)["result"]
    assert not result.get("isError") and result["structuredContent"] == plain, answer.text[:300]


def variants(env: dict) -> list[tuple[str, dict, dict, dict, bool]]:
    """(label, server environment, request body, headers, whether the client starts with `initialize`) of each MCP
    path measured."""
    return [
        ("2025-11-25", env, CALL, MCP_HEADERS, True),
        ("2026-07-28", env, MODERN_CALL, MODERN_HEADERS, False),
        ("2026-07-28 JSON-response mode", {**env, "MCP_MODERN_JSON_RESPONSE": "1"}, MODERN_CALL, MODERN_HEADERS, False),
    ]


def compare(label: str, env: dict, key: str, seconds: int, rounds: int) -> dict[str, float]:
    """MCP tools/call ÷ bare for each variant, in alternating rounds; returns the median ratios by variant."""
    measured = variants(env)
    bare = Server(env, "serving_bare_asgi:application")
    servers = [Server(variant_env, "mcpsite.asgi:application") for _, variant_env, *_ in measured]
    runs: dict[str, list[Run]] = {name: [] for name, *_ in measured}
    bare_runs: list[Run] = []
    plain = {"Content-Type": "application/json"}
    try:
        wrk(f"{bare.url}/", CALL["params"]["arguments"], plain, 2)  # warm-up
        calls = []
        for server, (_, _, call, headers, initialize) in zip(servers, measured, strict=True):
            headers = handshake(server, key, headers) if initialize else {**headers, "Authorization": f"Bearer {key}"}
            check_answers(bare, server, call, headers)
            wrk(f"{server.url}/mcp", call, headers, 2)
            calls.append((call, headers))
        for _ in range(rounds):
            bare_runs.append(wrk_with_cpu(bare, "/", CALL["params"]["arguments"], plain, seconds))
            for server, (name, *_), (call, headers) in zip(servers, measured, calls, strict=True):
                runs[name].append(wrk_with_cpu(server, "/mcp", call, headers, seconds))
        ceiling = wrk_with_cpu(bare, "/noop", None, {}, 2)
    finally:
        for server in [bare, *servers]:
            server.stop()
    median = statistics.median
    bare_rate, bare_cpu = median(r.rate for r in bare_runs), median(r.server_cpu for r in bare_runs)
    print(f"{label:<11} bare ASGI handler calling the same tool function {bare_rate:7.1f} req/s, "
          f"{bare_cpu:.2f} ms server CPU per request", flush=True)  # fmt: skip
    ratios = {}
    for name, measurements in runs.items():
        rate, cpu = median(r.rate for r in measurements), median(r.server_cpu for r in measurements)
        # Each round against the bare run just before it: the machine's load drifts less within a round.
        ratios[name] = median(r.rate / b.rate for r, b in zip(measurements, bare_runs, strict=True))
        cpu_ratio = median(b.server_cpu / r.server_cpu for r, b in zip(measurements, bare_runs, strict=True))
        print(f"{'':<11} MCP tools/call {name:<29} {rate:7.1f} req/s | MCP ÷ bare {ratios[name]:.2f}x | "
              f"server CPU per request {cpu:.2f} ms, bare ÷ MCP {cpu_ratio:.2f}x", flush=True)  # fmt: skip
    legacy = ratios["2025-11-25"]
    print(f"{'':<11} 2026-07-28 ÷ 2025-11-25: {ratios['2026-07-28'] / legacy:.2f}x | its JSON-response mode ÷ "
          f"2025-11-25: {ratios['2026-07-28 JSON-response mode'] / legacy:.2f}x", flush=True)  # fmt: skip
    every = [*bare_runs, *(r for measurements in runs.values() for r in measurements)]
    print(f"{'':<11} load generator: wrk {median(r.wrk_cpu for r in every):.2f} ms CPU per request, "
          f"{median(r.wrk_busy for r in every):.0%} of a core, while the server used "
          f"{median(r.server_busy for r in every):.0%} of one (its one worker's ceiling: 100%); "
          f"wrk against a handler that does nothing: {ceiling.rate:.0f} req/s", flush=True)  # fmt: skip
    return ratios


def scale_out(env: dict, key: str, seconds: int, rounds: int) -> float:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {key}"}
    rates: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(rounds):
        for workers in (1, 2):
            server = Server(env, "mcpsite.asgi:application", workers=workers)
            try:
                wrk(f"{server.url}/mcp", CALL, headers, 2)  # warm every worker
                rates[workers].append(wrk(f"{server.url}/mcp", CALL, headers, seconds))
            finally:
                server.stop()
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    print(
        f"PostgreSQL + Redis: MCP tools/call 1 worker {one:7.1f} req/s | 2 workers {two:7.1f} req/s | "
        f"2 workers ÷ 1 worker {two / one:.2f}x on {os.cpu_count()} cores (wrk shares them)",
        flush=True,
    )
    return two / one


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("bench_serving needs wrk (apt-get install wrk)")
    print(f"[serving] {CONNECTIONS} connections, {args.rounds} alternating rounds of {args.seconds}s, "
          f"1 uvicorn worker each, {os.cpu_count()} cores", flush=True)  # fmt: skip
    env = site_env(None)
    compare("SQLite", env, prepare(env), args.seconds, args.rounds)
    database_url = start_postgres()
    env = site_env(database_url)
    key = prepare(env)
    compare("PostgreSQL", env, key, args.seconds, args.rounds)
    env = site_env(database_url, start_redis(_cleanups))
    scale_out(env, key, args.seconds, args.rounds)


if __name__ == "__main__":
    main()
