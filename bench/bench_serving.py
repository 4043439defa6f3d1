"""Serving benchmark: real uvicorn processes over HTTP, 16 concurrent connections from `wrk`.

1. `tools/call get_seat_availability` over MCP Streamable HTTP (`/mcp`, the site as deployed: API key, rate limit,
   audit row) ÷ the same tool function behind a bare ASGI handler (bench/serving_bare_asgi.py), on SQLite and on
   PostgreSQL, for each protocol revision: 2025-11-25, and 2026-07-28 in its default SSE mode (a JSON body unless
   the handler notifies) and in JSON-response mode (MCP_MODERN_JSON_RESPONSE=1). Runs alternate (bare, each MCP
   variant, bare, ...) and the medians are compared.
2. Scale-out: the MCP path at 2 uvicorn workers ÷ 1 worker, on PostgreSQL with the limits in Redis.
3. wrk's own ceiling (an ASGI handler that does nothing), to show the load generator is not the bottleneck.
4. The server process's CPU time per request on each path: on cores shared with other jobs the rates swing with the
   machine's load, the CPU a request costs much less.

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
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
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
    def __init__(self, env: dict, app: str, workers: int = 1):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [PYTHON, "-m", "uvicorn", app, "--app-dir", str(ROOT / "bench"), "--host", "127.0.0.1",
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


def wrk_with_cpu(server: Server, path: str, body: dict | None, headers: dict, seconds: int) -> tuple[float, float]:
    """Requests per second, and the server process's CPU milliseconds per request: the rate depends on what else
    the shared cores run at the time, the CPU each request costs the server much less."""
    before = cpu_seconds(server.proc.pid)
    rate = wrk(f"{server.url}{path}", body, headers, seconds)
    return rate, 1000 * (cpu_seconds(server.proc.pid) - before) / (rate * seconds)


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


def check_answers(bare: Server, mcp: Server, key: str, call: dict, mcp_headers: dict) -> None:
    """One call each way, so the load measures real answers (not fast errors)."""
    plain = httpx2.post(f"{bare.url}/", json=CALL["params"]["arguments"]).json()
    headers = {**mcp_headers, "Authorization": f"Bearer {key}"}
    answer = httpx2.post(f"{mcp.url}/mcp", json=call, headers=headers, timeout=30)
    if answer.headers["content-type"].startswith("text/event-stream"):
        data = json.loads(next(line[5:] for line in answer.text.splitlines() if line.startswith("data:")))
    else:
        data = answer.json()
    result = data["result"]
    assert not result.get("isError") and result["structuredContent"] == plain, answer.text[:300]


def variants(env: dict) -> list[tuple[str, dict, dict, dict]]:
    """(label, server environment, request body, headers) of each MCP path measured."""
    return [
        ("2025-11-25", env, CALL, MCP_HEADERS),
        ("2026-07-28", env, MODERN_CALL, MODERN_HEADERS),
        ("2026-07-28 JSON-response mode", {**env, "MCP_MODERN_JSON_RESPONSE": "1"}, MODERN_CALL, MODERN_HEADERS),
    ]


def compare(label: str, env: dict, key: str, seconds: int, rounds: int) -> dict[str, float]:
    """MCP tools/call ÷ bare for each variant; returns the ratios by variant."""
    measured = variants(env)
    bare = Server(env, "serving_bare_asgi:application")
    servers = [Server(variant_env, "mcpsite.asgi:application") for _, variant_env, _, _ in measured]
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name, *_ in measured}
    bare_runs = []
    try:
        plain = {"Content-Type": "application/json"}
        wrk(f"{bare.url}/", CALL["params"]["arguments"], plain, 2)  # warm-up
        for server, (_, _, call, headers) in zip(servers, measured, strict=True):
            check_answers(bare, server, key, call, headers)
            wrk(f"{server.url}/mcp", call, {**headers, "Authorization": f"Bearer {key}"}, 2)
        for _ in range(rounds):
            bare_runs.append(wrk_with_cpu(bare, "/", CALL["params"]["arguments"], plain, seconds))
            for server, (name, _, call, headers) in zip(servers, measured, strict=True):
                runs[name].append(wrk_with_cpu(server, "/mcp", call, {**headers, "Authorization": f"Bearer {key}"},
                                               seconds))  # fmt: skip
        ceiling = wrk(f"{bare.url}/noop", None, {}, 2)
    finally:
        for server in [bare, *servers]:
            server.stop()
    bare_rate, bare_cpu = statistics.median(r for r, _ in bare_runs), statistics.median(c for _, c in bare_runs)
    print(f"{label:<11} bare ASGI handler calling the same tool function {bare_rate:7.1f} req/s, "
          f"{bare_cpu:.1f} ms CPU per request (wrk ceiling {ceiling:.0f} req/s)", flush=True)  # fmt: skip
    ratios = {}
    for name, measurements in runs.items():
        rate, cpu = statistics.median(r for r, _ in measurements), statistics.median(c for _, c in measurements)
        ratios[name] = rate / bare_rate
        print(f"{'':<11} MCP tools/call {name:<29} {rate:7.1f} req/s | MCP ÷ bare {ratios[name]:.2f}x | "
              f"server CPU per request {cpu:.1f} ms, bare ÷ MCP {bare_cpu / cpu:.2f}x", flush=True)  # fmt: skip
    legacy = ratios["2025-11-25"]
    print(f"{'':<11} 2026-07-28 ÷ 2025-11-25: {ratios['2026-07-28'] / legacy:.2f}x | its JSON-response mode ÷ "
          f"2025-11-25: {ratios['2026-07-28 JSON-response mode'] / legacy:.2f}x", flush=True)  # fmt: skip
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
