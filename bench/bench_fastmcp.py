"""A peer: mcpsite's `/mcp` ÷ FastMCP serving the same tool, requests per second side by side.

FastMCP (bench/serving_fastmcp.py, FASTMCP below) serves `get_seat_availability` through the same tool function on
the same seeded database, with the same worker-thread hop as bench_serving's bare handler, stateless with JSON
answers over Streamable HTTP, and nothing else: no API key, rate limit, size limits or audit row. mcpsite serves it
as deployed (a key, its rate counted, the call audited). One uvicorn worker each, 16 wrk connections, alternating
rounds (FastMCP, then mcpsite on each protocol revision); each round's mcpsite rate is divided by that round's
FastMCP rate and the median of those ratios is printed, with the server CPU per request (FastMCP ÷ mcpsite) beside
it. Goal: mcpsite ÷ FastMCP ≥ 1.0 on both revisions: the site's promises cost less than a general framework's path.

FastMCP needs packages the site does not, so it runs from a virtualenv of its own (FASTMCP_VENV, default
.tools/fastmcp-venv; made on first use: FASTMCP pinned, every package the site pins at the site's version, and the
site's virtualenv after its own on the path for Django and the database drivers).

    .venv/bin/python bench/bench_fastmcp.py [--seconds 8] [--rounds 3] [--database sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_serving import (  # noqa: E402
    CALL,
    CONNECTIONS,
    MCP_HEADERS,
    MODERN_CALL,
    MODERN_HEADERS,
    Run,
    Server,
    handshake,
    json_answer,
    prepare,
    site_env,
    start_postgres,
    wrk,
    wrk_with_cpu,
)

ROOT = Path(__file__).resolve().parent.parent
FASTMCP = "fastmcp==4.1.6"


def fastmcp_python() -> str:
    """The Python of FastMCP's own virtualenv, made first if it does not hold FASTMCP yet."""
    venv = Path(os.environ.get("FASTMCP_VENV", ROOT / ".tools" / "fastmcp-venv"))
    python = venv / "bin" / "python"
    marker = venv / f".installed-{FASTMCP}"
    if marker.exists():
        return str(python)
    print(f"[fastmcp] installing {FASTMCP} into {venv}", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    # The site's pins as constraints (pip refuses extras there), so the packages both load are the same versions.
    pins = re.sub(r"\[[^\]]*\]", "", (ROOT / "requirements.txt").read_text())
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as constraints:
        constraints.write(pins)
    try:
        install = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-c",
                                  constraints.name, FASTMCP], capture_output=True, text=True)  # fmt: skip
    finally:
        os.unlink(constraints.name)
    # (this machine's pip config names local indexes that may be absent; those warnings are noise)
    print("".join(line for line in install.stderr.splitlines(True) if not line.startswith("WARNING: Location")))
    install.check_returncode()
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    Path(site, "mcpsite-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    marker.touch()
    return str(python)


def check_same_answer(fastmcp: Server, fastmcp_headers: dict, mcpsite: Server, headers: dict, call: dict) -> None:
    """One call each way, so the load measures the same real answer (not fast errors)."""
    import httpx2

    results = [json_answer(httpx2.post(f"{server.url}/mcp", json=call, headers=h, timeout=30))["result"]
               for server, h in ((fastmcp, fastmcp_headers), (mcpsite, headers))]  # fmt: skip
    assert not any(r.get("isError") for r in results), results
    assert results[0]["structuredContent"] == results[1]["structuredContent"], results


def compare(label: str, env: dict, key: str, seconds: int, rounds: int) -> dict[str, float]:
    """mcpsite ÷ FastMCP for each revision, in alternating rounds; returns the median ratios by revision."""
    revisions = [("2025-11-25", CALL, MCP_HEADERS, True), ("2026-07-28", MODERN_CALL, MODERN_HEADERS, False)]
    fastmcp = Server(env, "serving_fastmcp:application", python=fastmcp_python())
    mcpsite = Server(env, "mcpsite.asgi:application")
    loads = []
    try:
        for revision, call, headers, initialize in revisions:
            ours = handshake(mcpsite, key, headers) if initialize else {**headers, "Authorization": f"Bearer {key}"}
            theirs = handshake(fastmcp, None, headers) if initialize else dict(headers)
            check_same_answer(fastmcp, theirs, mcpsite, ours, call)
            for server, h in ((fastmcp, theirs), (mcpsite, ours)):
                wrk(f"{server.url}/mcp", call, h, 2)  # warm-up
            loads.append((revision, call, theirs, ours))
        runs: dict[str, list[tuple[Run, Run]]] = {revision: [] for revision, *_ in loads}
        for _ in range(rounds):
            for revision, call, theirs, ours in loads:
                peer = wrk_with_cpu(fastmcp, "/mcp", call, theirs, seconds)
                runs[revision].append((wrk_with_cpu(mcpsite, "/mcp", call, ours, seconds), peer))
    finally:
        fastmcp.stop()
        mcpsite.stop()
    median = statistics.median
    ratios = {}
    for revision, pairs in runs.items():
        ratios[revision] = median(ours.rate / peer.rate for ours, peer in pairs)
        cpu_ratio = median(peer.server_cpu / ours.server_cpu for ours, peer in pairs)
        print(f"{label:<11} {revision}: mcpsite {median(o.rate for o, _ in pairs):7.1f} req/s, "
              f"FastMCP {median(p.rate for _, p in pairs):7.1f} req/s | mcpsite ÷ FastMCP {ratios[revision]:.2f}x | "
              f"server CPU per request {median(o.server_cpu for o, _ in pairs):.2f} ms, "
              f"{median(p.server_cpu for _, p in pairs):.2f} ms, FastMCP ÷ mcpsite {cpu_ratio:.2f}x",
              flush=True)  # fmt: skip
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database", choices=["sqlite", "postgres", "both"], default="both")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("bench_fastmcp needs wrk (apt-get install wrk)")
    print(f"[fastmcp] {FASTMCP}: {CONNECTIONS} connections, {args.rounds} alternating rounds of {args.seconds}s, "
          f"1 uvicorn worker each, {os.cpu_count()} cores", flush=True)  # fmt: skip
    if args.database in ("sqlite", "both"):
        env = site_env(None)
        compare("SQLite", env, prepare(env), args.seconds, args.rounds)
    if args.database in ("postgres", "both"):
        env = site_env(start_postgres())
        compare("PostgreSQL", env, prepare(env), args.seconds, args.rounds)


if __name__ == "__main__":
    main()
