"""Cinema booking benchmark: `reserve_seats` throughput over `/rpc` on PostgreSQL against the argon2 rate.

Every booking hashes its password with the configured argon2id hasher, so the most one server can do is
the machine's hashing rate. Standalone: a fresh database on the throwaway PostgreSQL of `scripts/testpg`
($TESTPG_PORT), `seed_cinema --scale 1` (a 500-seat theater), then one uvicorn server (one worker, as
`make demo` runs) with the site's own settings, as shipped (Django's native PostgreSQL pool sized by
DATABASE_POOL_SIZE, printed). With `--production-workers N`, also the command docs/production.md tells people to
run: N uvicorn workers with the rate limits in Redis (a private redis-server), measured in the same rounds.
Interleaved rounds (these machines are noisy): the hasher's rate with 2 threads in this process, then 16 agents
(threads released together) each booking its own seats one request at a time on one new show. Every booking must
succeed, and the database must hold each seat once: a double booking fails the benchmark.

Printed with the rates, because the cores are shared: the load average, how idle the machine was while booking,
and the CPU each booking cost the server (hash included), PostgreSQL and the agents, against the CPU of one hash.
CPU per hash ÷ CPU per booking is what the ratio of rates comes to on a quiet machine whose cores the bookings
keep busy; the neighbours' load moves it much less than the rates.

    .venv/bin/python bench/bench_cinema_booking.py [--rounds 3] [--agents 16] [--bookings 20] [--production-workers N]
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, boot, family_cpu_seconds, start_redis  # noqa: E402

boot("cinema-booking", postgres=True)

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.hashers import make_password  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count  # noqa: E402
from django.utils import timezone  # noqa: E402

from cinema.models import Movie, ReservedSeat, Schedule, Theater  # noqa: E402
from mcpsite.services import api_key_create  # noqa: E402

PASSWORD = "bench-pass-1234"


def hash_rate(threads: int = 2, seconds: float = 3.0) -> tuple[float, float]:
    """Hashes per second of the configured (first) password hasher on `threads` threads, and the CPU seconds
    one hash took (this process does nothing else meanwhile)."""
    done = [0] * threads
    deadline = time.perf_counter() + seconds

    def work(i: int) -> None:
        while time.perf_counter() < deadline:
            make_password(PASSWORD)
            done[i] += 1

    started, cpu = time.perf_counter(), time.process_time()
    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(done) / (time.perf_counter() - started), (time.process_time() - cpu) / sum(done)


class Server:
    """uvicorn serving the site on the bench database: `workers` processes, `env` added to the environment."""

    def __init__(self, settings_module: str, workers: int = 1, env: dict | None = None):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings_module, "LOG_LEVEL": "WARNING", **(env or {})}
        env["PYTHONPATH"] = str(ROOT)
        self.log = tempfile.NamedTemporaryFile(prefix="bench-uvicorn-", suffix=".log", delete=False)  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "mcpsite.asgi:application", "--host", "127.0.0.1",
             "--port", str(self.port), "--workers", str(workers), "--lifespan", "on", "--no-access-log"],
            env=env, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                time.sleep(0.3)
            if self.process.poll() is not None:
                break
        raise RuntimeError(f"uvicorn did not start:\n{Path(self.log.name).read_text()}")

    def cpu_seconds(self) -> float:
        return family_cpu_seconds(self.process.pid)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)
        os.unlink(self.log.name)


def new_show(theater: Theater, movie: Movie, slot: int) -> Schedule:
    day = timezone.localdate() + datetime.timedelta(days=2)
    start = datetime.time(slot // 6, slot % 6 * 10)
    return Schedule.objects.create(movie=movie, theater=theater, date=day, start_time=start, end_time=start)


def book_all(port: int, key: str, show: Schedule, seats: list[list[str]]) -> tuple[float, int, list[str]]:
    """Agents (one per seat list, each with its own keep-alive connection) released together; each books its
    seats one request at a time. Returns (seconds, confirmed bookings, errors)."""
    barrier = threading.Barrier(len(seats) + 1)
    confirmed = [0] * len(seats)
    errors: list[str] = []
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def agent(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        barrier.wait()
        for n, label in enumerate(seats[i]):
            body = {
                "jsonrpc": "2.0", "id": n, "method": "reserve_seats",
                "params": {"schedule_id": show.public_id, "seats": [label], "reservation_password": PASSWORD,
                           "customer_name": f"agent {i}"},
            }  # fmt: skip
            conn.request("POST", "/rpc", body=json.dumps(body), headers=headers)
            answer = json.loads(conn.getresponse().read())
            if answer.get("result", {}).get("status") == "confirmed":
                confirmed[i] += 1
            else:
                errors.append(f"agent {i} seat {label}: {answer.get('error')}")
        conn.close()

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(len(seats))]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - started, sum(confirmed), errors


def machine_idle_seconds() -> tuple[float, float]:
    """(idle, total) CPU seconds of the whole machine so far, all cores (Linux /proc/stat)."""
    ticks = [int(t) for t in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    return (ticks[3] + ticks[4]) / hz, sum(ticks[:8]) / hz


def double_bookings(show: Schedule) -> int:
    return (
        ReservedSeat.objects.filter(schedule=show, active=True)
        .values("seat")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )


def _load(averages: tuple[float, float, float]) -> str:
    return ", ".join(f"{a:.2f}" for a in averages)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--bookings", type=int, default=20, help="bookings per agent per round")
    parser.add_argument("--production-workers", type=int, default=0)
    options = parser.parse_args()

    call_command("seed_cinema", scale=1, days=1, stdout=open(os.devnull, "w"))  # noqa: SIM115
    theater = Theater.objects.filter(rows=20, columns=25).order_by("pk").first()
    movie = Movie.objects.order_by("pk").first()
    labels = list(theater.seats.filter(blocked=False).order_by("row", "column").values_list("label", flat=True))
    per_show = options.agents * options.bookings
    assert per_show <= len(labels), f"{per_show} bookings per show, {len(labels)} seats"
    seats = [labels[i * options.bookings : (i + 1) * options.bookings] for i in range(options.agents)]
    owner = get_user_model().objects.create_user("bench-agent")
    _record, key = api_key_create(name="bench", owner=owner, scopes=["cinema"], rate="1000000/m")

    with connection.cursor() as cursor:
        cursor.execute("SHOW data_directory")
        postmaster = int(Path(cursor.fetchone()[0], "postmaster.pid").read_text().split()[0])
    cleanups: list = []
    servers = {"site settings": Server("mcpsite.settings")}
    if options.production_workers:
        production = {"REDIS_URL": start_redis(cleanups)}
        servers["production command"] = Server("mcpsite.settings", options.production_workers, production)
    rates: list[float] = []
    hash_cpu: list[float] = []
    throughput: dict[str, list[float]] = {name: [] for name in servers}
    cpu: dict[str, dict[str, list[float]]] = {name: {"server": [], "postgres": [], "agents": []} for name in servers}
    idle: dict[str, list[float]] = {name: [] for name in servers}
    load_before = os.getloadavg()
    slot = 100  # after the seeded shows (one every 10 minutes from 00:00)
    try:
        for server in servers.values():  # warm each server (imports, first connections) on a show of its own
            book_all(server.port, key, new_show(theater, movie, slot), [labels[i : i + 2] for i in range(0, 16, 2)])
            slot += 1
        for r in range(options.rounds):
            rate, seconds_per_hash = hash_rate()
            rates.append(rate)
            hash_cpu.append(seconds_per_hash)
            for name, server in servers.items():
                show = new_show(theater, movie, slot)
                slot += 1
                before = server.cpu_seconds(), family_cpu_seconds(postmaster), time.process_time()
                machine = machine_idle_seconds()
                seconds, confirmed, errors = book_all(server.port, key, show, seats)
                machine = [a - b for a, b in zip(machine_idle_seconds(), machine, strict=True)]
                after = server.cpu_seconds(), family_cpu_seconds(postmaster), time.process_time()
                idle[name].append(machine[0] / machine[1])
                assert not errors, errors[:5]
                assert confirmed == per_show == show.reserved_seats.filter(active=True).count(), confirmed
                assert double_bookings(show) == 0, f"double bookings on {show.public_id}"
                throughput[name].append(confirmed / seconds)
                for part, b, a in zip(("server", "postgres", "agents"), before, after, strict=True):
                    cpu[name][part].append((a - b) / confirmed)
            print(f"  round {r + 1}/{options.rounds} done", flush=True)
    finally:
        for server in servers.values():
            server.stop()
        for cleanup in cleanups:
            cleanup()

    rate = statistics.median(rates)
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    shipped = f"pool {pool}, MCP_TOOL_THREADS {settings.MCP_TOOL_THREADS}"
    load_after = os.getloadavg()
    print(f"\ncinema reserve_seats over /rpc on PostgreSQL: {options.agents} agents x {options.bookings} bookings")
    print(f"(1 seat each, own seats, one show per round), median of {options.rounds} interleaved rounds")
    print(f"load average before: {_load(load_before)}; after: {_load(load_after)} ({os.cpu_count()} cores)")
    print(f"site settings: 1 uvicorn worker, the site's settings as shipped ({shipped}; /rpc runs in Django's")
    print("  request threads, one per concurrent request, kept between requests: the tool pool serves /mcp)")
    if options.production_workers:
        print(f"production command (docs/production.md): {options.production_workers} uvicorn workers, Redis for the"
              " rate limits, the same settings")  # fmt: skip
    hash_ms = 1000 * statistics.median(hash_cpu)
    print(f"  argon2 hasher, 2 threads:            {rate:7.1f} hashes/s   1.00   CPU ms per hash: {hash_ms:5.1f}")
    for name, values in throughput.items():
        median = statistics.median(values)
        parts = " | ".join(f"{part} {1000 * statistics.median(v):5.1f}" for part, v in cpu[name].items())
        print(f"  bookings/s, {name:<24} {median:7.1f}            {median / rate:5.2f}   CPU ms per booking: {parts}")
        per_booking = sum(statistics.median(v) for v in cpu[name].values())
        print(
            f"  {'':<36} machine idle while booking: {statistics.median(idle[name]):.0%} of its cores; CPU per hash "
            f"÷ CPU per booking (server + PostgreSQL + agents): {statistics.median(hash_cpu) / per_booking:.2f}"
        )
    print("  double bookings: 0 (checked after every round); every booking confirmed")


if __name__ == "__main__":
    main()
