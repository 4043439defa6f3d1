"""Shared bootstrapping for the standalone benchmarks: a throwaway database (SQLite, or PostgreSQL from
`scripts/testpg` on $TESTPG_PORT) and timing helpers.

Every benchmark prints ratios against a baseline run side by side in the same process, because
these machines are noisy: absolute times mean little, ratios are what count.
"""

from __future__ import annotations

import argparse
import atexit
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


DATABASES = ("sqlite", "postgres")


def run_each_database(script: str) -> None:
    """Run `script` with this process's arguments once per database (`--database sqlite`, then `postgres`), one
    child process each: Django binds one database per process. Output goes straight through."""
    for database in DATABASES:
        print(f"=== {database}", flush=True)
        subprocess.run([sys.executable, script, *sys.argv[1:], "--database", database], check=True)


def parse_per_database(parser: argparse.ArgumentParser, script: str) -> argparse.Namespace | None:
    """`parser`'s arguments plus `--database sqlite|postgres|both` (default both). With `both` this runs `script` once
    per database (run_each_database) and returns None: the caller has nothing left to do."""
    parser.add_argument("--database", choices=[*DATABASES, "both"], default="both")
    args = parser.parse_args()
    if args.database == "both":
        run_each_database(script)
        return None
    return args


def postgres_cluster(name: str) -> tuple[str, dict[str, str], bool]:
    """The throwaway cluster of `scripts/testpg` on $TESTPG_PORT, started if it is not running: the URL of its
    `postgres` database, the environment for `scripts/testpg`, and whether this call started it."""
    import psycopg

    env = {**os.environ, "TESTPG_PORT": os.environ.get("TESTPG_PORT", "54329")}
    admin_url = subprocess.run(
        [ROOT / "scripts/testpg", "url", "postgres"], env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    try:
        psycopg.connect(admin_url, connect_timeout=2).close()
        return admin_url, env, False
    except psycopg.OperationalError:
        print(f"[{name}] starting the throwaway PostgreSQL (scripts/testpg, port {env['TESTPG_PORT']})", flush=True)
        subprocess.run([ROOT / "scripts/testpg", "start"], env=env, check=True, capture_output=True)
        return admin_url, env, True


def postgres_database(name: str) -> str:
    """The URL of a new, empty database on the throwaway cluster of `scripts/testpg` (started if it is not
    running, and then stopped at exit); the database is dropped at exit."""
    import psycopg

    admin_url, env, started = postgres_cluster(name)
    database = f"bench_{name.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')

    def drop() -> None:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            others = conn.execute("SELECT count(*) FROM pg_database WHERE datname LIKE 'bench\\_%'").fetchone()[0]
        if started and not others:  # the cluster we started, unless another benchmark still uses it
            subprocess.run([ROOT / "scripts/testpg", "stop"], env=env, check=False)

    atexit.register(drop)
    return admin_url.rsplit("/", 1)[0] + "/" + database


def boot(name: str, *, postgres: bool = False) -> str:
    """Set up Django on a fresh, migrated database (SQLite in a temporary MCPSITE_VAR_DIR, or a new PostgreSQL
    database: never the user's data), removed when the process exits; returns that directory."""
    sys.path.insert(0, str(ROOT))
    var_dir = tempfile.mkdtemp(prefix=f"bench-{name}-")
    atexit.register(_remove, var_dir)
    os.environ["MCPSITE_VAR_DIR"] = var_dir
    if postgres:
        os.environ["DATABASE_URL"] = postgres_database(name)
    else:
        os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    where = "PostgreSQL database" if postgres else f"SQLite database in {var_dir}"
    print(f"[{name}] migrating a fresh {where}", flush=True)
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    return var_dir


def _remove(var_dir: str) -> None:
    from django.db import connections

    connections.close_all()
    shutil.rmtree(var_dir, ignore_errors=True)


def timings(fn: Callable[[], object], *, repeat: int, warmup: int = 1) -> list[float]:
    """Wall-clock seconds of `repeat` calls of fn, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return samples


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def p95(samples: list[float]) -> float:
    return percentile(samples, 95)


def report(label: str, ours: list[float], baseline: list[float], baseline_label: str) -> float:
    """Print medians, p95s and the ratio ours/baseline (lower is better); returns the median ratio."""
    ratio = statistics.median(ours) / statistics.median(baseline)
    print(
        f"{label:<44} median {statistics.median(ours) * 1000:9.3f} ms  p95 {p95(ours) * 1000:9.3f} ms | "
        f"{baseline_label}: median {statistics.median(baseline) * 1000:9.3f} ms | ratio {ratio:6.2f}x",
        flush=True,
    )
    return ratio


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def family_cpu_seconds(pid: int) -> float:
    """CPU time so far of a process and its children: the live ones, and those it has reaped (a uvicorn
    supervisor and its workers; a PostgreSQL postmaster and its backends)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[1]) == pid:
            total += cpu_seconds(int(stat.parent.name))
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return total + sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def start_redis(cleanups: list) -> str:
    """A private redis-server on a free loopback port, no persistence; returns its URL. Its stop is appended to
    `cleanups`."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL)  # fmt: skip
    cleanups.append(lambda: (proc.terminate(), proc.wait()))
    for _ in range(50):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return f"redis://127.0.0.1:{port}/0"
        time.sleep(0.1)
    raise SystemExit("redis-server did not start")


def peak_rss_mib() -> float:
    """This process's peak resident memory so far, in MiB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
