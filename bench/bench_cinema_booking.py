"""Cinema booking benchmark: `reserve_seats` throughput over `/rpc` on PostgreSQL against the argon2 rate.

Every booking hashes its password with the configured argon2id hasher, so the most one server can do is
the machine's hashing rate. Standalone: a fresh database on the throwaway PostgreSQL of `scripts/testpg`
($TESTPG_PORT), `seed_cinema --scale 1` (a 500-seat theater), then one uvicorn server (one worker, as
`make demo` runs) with the site's own settings, as shipped (Django's native PostgreSQL pool sized by
DATABASE_POOL_SIZE, printed). With `--production-workers N`, also the command docs/production.md tells people to
run: N uvicorn workers with the rate limits in Redis (a private redis-server), measured in the same rounds.

Cores: the server side (uvicorn, PostgreSQL's backends, the hasher) runs on the first `--server-cores` (2) cores this
process may use, and the agents on the others when there are any (sched_setaffinity, as `taskset` does); on a 2-core
machine the agents share the server's cores, and their CPU is printed. Each round, interleaved (these machines are
noisy): the hasher's rate in a process of its own on the server's cores, hashing as the server does
(`mcpsite.hashers.password_hash`: PASSWORD_HASH_THREADS threads, fed by 16 callers), then 16 agents (threads
released together) each booking its own seats one request at a time on one new show. Both rates are counted in
their steady state: the hasher after each thread's first hash, the bookings from the moment every agent has one
booking confirmed to the moment the first agent has sent its last (warm-up and tail excluded), so short and long
runs agree. A warm-up round per server comes first and is not counted. Every booking must succeed, and the
database must hold each seat once: a double booking fails the benchmark.

Printed with the rates, because the cores are shared: the load average, how idle the machine was while booking,
and the CPU each booking cost the server (hash included), PostgreSQL and the agents, against the CPU of one hash.
CPU per hash ÷ CPU per booking is what the ratio of rates comes to on a quiet machine whose cores the bookings
keep busy; the neighbours' load moves it much less than the rates.

    .venv/bin/python bench/bench_cinema_booking.py [--rounds 3] [--agents 16] [--bookings 20] [--server-cores 2]
        [--production-workers N]
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

PASSWORD = "bench-pass-1234"
CALLERS = 16  # threads feeding the hasher, as the agents' requests feed the server's


def hasher_main(seconds: float) -> None:
    """In a process of its own (`--hasher SECONDS`), pinned like the server: the rate and CPU per hash of
    `password_hash`, which the server's bookings call, fed by CALLERS threads. Prints one JSON line."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
    import django

    django.setup()
    from django.conf import settings

    from mcpsite.hashers import password_hash

    threads = settings.PASSWORD_HASH_THREADS
    done: list[float] = []
    stop = time.perf_counter() + seconds

    def caller() -> None:
        while time.perf_counter() < stop:
            password_hash(PASSWORD)
            done.append(time.perf_counter())

    cpu = time.process_time()
    callers = [threading.Thread(target=caller) for _ in range(CALLERS)]
    for c in callers:
        c.start()
    for c in callers:
        c.join()
    cpu = time.process_time() - cpu
    times = sorted(done)
    # Steady state: from the moment every hashing thread has finished one hash to the moment the last ones start
    # running alone (the first hash of a thread maps its memory; the queue's end leaves cores idle).
    begin, end = times[threads - 1], times[-threads]
    rate = (len(times) - 2 * threads + 1) / (end - begin)
    print(json.dumps({"rate": rate, "cpu_per_hash": cpu / len(times), "threads": threads, "hashes": len(times)}))


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--hasher":
    hasher_main(float(sys.argv[2]))
    sys.exit()

boot("cinema-booking", postgres=True)

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count  # noqa: E402
from django.utils import timezone  # noqa: E402

from cinema.models import Movie, ReservedSeat, Schedule, Theater  # noqa: E402
from mcpsite.services import api_key_create  # noqa: E402


def pinned(cpus: set[int] | None):
    """A Popen preexec_fn running the child on `cpus` (None: wherever it likes)."""
    return None if cpus is None else (lambda: os.sched_setaffinity(0, cpus))


def hash_rate(cpus: set[int] | None, seconds: float) -> dict:
    """The hasher's steady rate and CPU per hash, measured in a fresh process on `cpus` (hasher_main)."""
    out = subprocess.run(
        [sys.executable, __file__, "--hasher", str(seconds)], env={**os.environ, "LOG_LEVEL": "WARNING"},
        cwd=ROOT, check=True, capture_output=True, text=True, preexec_fn=pinned(cpus),
    ).stdout  # fmt: skip
    return json.loads(out.strip().splitlines()[-1])


class Server:
    """uvicorn serving the site on the bench database: `workers` processes on `cpus`, `env` added to the
    environment."""

    def __init__(self, settings_module: str, workers: int = 1, env: dict | None = None, cpus: set[int] | None = None):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings_module, "LOG_LEVEL": "WARNING", **(env or {})}
        env["PYTHONPATH"] = str(ROOT)
        self.log = tempfile.NamedTemporaryFile(prefix="bench-uvicorn-", suffix=".log", delete=False)  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "mcpsite.asgi:application", "--host", "127.0.0.1",
             "--port", str(self.port), "--workers", str(workers), "--lifespan", "on", "--no-access-log"],
            env=env, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=pinned(cpus),
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
    start, end = (datetime.time(n // 6 % 24, n % 6 * 10) for n in (slot, slot + 1))  # ten minutes: no overlap
    return Schedule.objects.create(movie=movie, theater=theater, date=day, start_time=start, end_time=end)


def book_all(port: int, key: str, show: Schedule, seats: list[list[str]]) -> tuple[float, int, int, list[str]]:
    """Agents (one per seat list, each with its own keep-alive connection) released together; each books its
    seats one request at a time. Returns (steady seconds, bookings confirmed in them, all confirmed, errors): the
    steady state runs from the moment every agent has one booking confirmed to the moment the first agent has
    its last one."""
    barrier = threading.Barrier(len(seats) + 1)
    confirmed: list[list[float]] = [[] for _ in seats]
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
                confirmed[i].append(time.perf_counter())
            else:
                errors.append(f"agent {i} seat {label}: {answer.get('error')}")
        conn.close()

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(len(seats))]
    for t in threads:
        t.start()
    barrier.wait()
    for t in threads:
        t.join()
    if errors or not all(confirmed):
        return 0.0, 0, sum(map(len, confirmed)), errors or ["an agent confirmed nothing"]
    begin, end = max(times[0] for times in confirmed), min(times[-1] for times in confirmed)
    steady = sum(1 for times in confirmed for t in times if begin < t <= end)
    return end - begin, steady, sum(map(len, confirmed)), errors


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


def _pin_family(pid: int, cpus: set[int]) -> None:
    """Run a process and its children (PostgreSQL's postmaster and backends) on `cpus`."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[1]) == pid:
                os.sched_setaffinity(int(stat.parent.name), cpus)
        except OSError:  # ended meanwhile, or not ours to pin
            continue
    os.sched_setaffinity(pid, cpus)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--bookings", type=int, default=20, help="bookings per agent per round")
    parser.add_argument("--hash-seconds", type=float, default=4.0, help="the hasher's time per round")
    parser.add_argument("--server-cores", type=int, default=2, help="cores for the server, PostgreSQL, the hasher")
    parser.add_argument("--production-workers", type=int, default=0)
    options = parser.parse_args()
    if options.rounds < 3:
        parser.error("--rounds must be at least 3 (the figure is a median of rounds)")

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
    cpus = sorted(os.sched_getaffinity(0))
    server_cpus: set[int] | None = set(cpus[: options.server_cores])
    agent_cpus = set(cpus[options.server_cores :])
    postgres_cpus = os.sched_getaffinity(postmaster)
    if agent_cpus:
        _pin_family(postmaster, server_cpus)
        cores = f"server, PostgreSQL and hasher on CPUs {sorted(server_cpus)}, agents on CPUs {sorted(agent_cpus)}"
    else:  # nothing to keep the agents apart on: no pinning at all
        server_cpus, agent_cpus = None, set(cpus)
        cores = f"the agents share the server's cores (this machine has {len(cpus)})"
    cleanups: list = []
    servers = {"site settings": Server("mcpsite.settings", cpus=server_cpus)}
    if options.production_workers:
        production = {"REDIS_URL": start_redis(cleanups)}
        servers["production command"] = Server("mcpsite.settings", options.production_workers, production, server_cpus)
    os.sched_setaffinity(0, agent_cpus)  # the agents' threads start from here
    hashes: list[dict] = []
    ratios: dict[str, list[float]] = {name: [] for name in servers}
    throughput: dict[str, list[float]] = {name: [] for name in servers}
    cpu: dict[str, dict[str, list[float]]] = {name: {"server": [], "postgres": [], "agents": []} for name in servers}
    idle: dict[str, list[float]] = {name: [] for name in servers}
    load_before = os.getloadavg()
    slot = 100  # after the seeded shows (one every 10 minutes from 00:00)
    try:
        # Warm-up, not counted: each server's imports, connections and threads on a show of its own, the hasher once.
        hash_rate(server_cpus, 1.0)
        for server in servers.values():
            warm = [labels[i * 3 : i * 3 + 3] for i in range(options.agents)]
            book_all(server.port, key, new_show(theater, movie, slot), warm)
            slot += 1
        for r in range(options.rounds):
            hashes.append(hash_rate(server_cpus, options.hash_seconds))
            for name, server in servers.items():
                show = new_show(theater, movie, slot)
                slot += 1
                before = server.cpu_seconds(), family_cpu_seconds(postmaster), time.process_time()
                machine = machine_idle_seconds()
                seconds, steady, confirmed, errors = book_all(server.port, key, show, seats)
                machine = [a - b for a, b in zip(machine_idle_seconds(), machine, strict=True)]
                after = server.cpu_seconds(), family_cpu_seconds(postmaster), time.process_time()
                idle[name].append(machine[0] / machine[1])
                assert not errors, errors[:5]
                assert confirmed == per_show == show.reserved_seats.filter(active=True).count(), confirmed
                assert double_bookings(show) == 0, f"double bookings on {show.public_id}"
                throughput[name].append(steady / seconds)
                ratios[name].append(steady / seconds / hashes[-1]["rate"])
                for part, b, a in zip(("server", "postgres", "agents"), before, after, strict=True):
                    cpu[name][part].append((a - b) / confirmed)
            shown = ", ".join(f"{name} {values[-1]:.2f}" for name, values in ratios.items())
            print(f"  round {r + 1}/{options.rounds}: bookings ÷ hashes {shown}", flush=True)
    finally:
        for server in servers.values():
            server.stop()
        for cleanup in cleanups:
            cleanup()
        if server_cpus is not None:
            _pin_family(postmaster, postgres_cpus)

    rate = statistics.median(h["rate"] for h in hashes)
    hash_cpu = statistics.median(h["cpu_per_hash"] for h in hashes)
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    shipped = f"pool {pool}, PASSWORD_HASH_THREADS {hashes[0]['threads']}"
    load_after = os.getloadavg()
    print(f"\ncinema reserve_seats over /rpc on PostgreSQL: {options.agents} agents x {options.bookings} bookings")
    print(f"(1 seat each, own seats, one show per round), median of {options.rounds} interleaved rounds, warm-up apart")
    print(f"load average before: {_load(load_before)}; after: {_load(load_after)} ({os.cpu_count()} cores); {cores}")
    print(f"site settings: 1 uvicorn worker, the site's settings as shipped ({shipped}; /rpc runs in Django's")
    print("  request threads, one per concurrent request; each hash on the process's hashing threads)")
    if options.production_workers:
        print(f"production command (docs/production.md): {options.production_workers} uvicorn workers, Redis for the"
              " rate limits, the same settings")  # fmt: skip
    print(f"  argon2 hasher, {hashes[0]['threads']} threads (password_hash): {rate:7.1f} hashes/s   1.00   "
          f"CPU ms per hash: {1000 * hash_cpu:5.1f}")  # fmt: skip
    for name, values in throughput.items():
        ratio = statistics.median(ratios[name])
        parts = " | ".join(f"{part} {1000 * statistics.median(v):5.1f}" for part, v in cpu[name].items())
        print(f"  bookings/s, {name:<24} {statistics.median(values):7.1f}            {ratio:5.2f}   "
              f"CPU ms per booking: {parts}")  # fmt: skip
        per_booking = sum(statistics.median(v) for v in cpu[name].values())
        print(
            f"  {'':<36} bookings ÷ hashes per round: {', '.join(f'{x:.2f}' for x in ratios[name])}; machine idle "
            f"while booking: {statistics.median(idle[name]):.0%} of its cores; CPU per hash ÷ CPU per booking "
            f"(server + PostgreSQL + agents): {hash_cpu / per_booking:.2f}"
        )
    print("  double bookings: 0 (checked after every round); every booking confirmed")
    if max(load_before[0], load_after[0]) > len(cpus) / 2:
        print(f"  the machine was busy (load above {len(cpus) / 2:g} on {len(cpus)} cores): the scheduler shares its"
              " cores per thread, so the rates compare shares of it; read the CPU ratio")  # fmt: skip


if __name__ == "__main__":
    main()
