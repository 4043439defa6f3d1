"""Benchmark: staff pages at scale (1,000,000 tool calls, 10,000 shows), SQLite and PostgreSQL.

One child process per database (Django binds one per process). The data lives in the benchmark's own database,
kept between runs because loading a million rows takes minutes: `var/bench-cache/staff-pages.sqlite3`, and the
database `benchcache_staff_pages` on the throwaway cluster of `scripts/testpg` ($TESTPG_PORT); never the
development database. A cached database is migrated, its row counts checked (reloaded if they differ), and its
tool calls moved forward in time so the newest is a second old, as on a fresh load (the dashboard reads the last
24 hours). `--reload` loads afresh.

The tool calls are spread evenly over the last `--days` days (20 tools, 5 API keys, 1 in 13 failed); the shows
are five a day in each of 10 theaters around today (200 days for 10,000), each with a few reservations.

For each page, as a superuser and as a staff member whose group may only view, it prints the server time (the
request through Django's test client, in this process: no network), median over `--rounds` rounds after a warm-up,
the time of the page's SQL queries alone (captured during one request with `connection.execute_wrapper` and
executed again with their parameters, rows fetched) and the ratio page ÷ queries, and the number of queries.
The pages: the tool-call list (default, and a day of the date hierarchy), the admin index with the dashboard, the
schedule list, and the tool-call list filtered to a year without calls: the admin's fixed cost of a list page (its
chrome, filters and date hierarchy, no row), the floor under every list's "rest".

    .venv/bin/python bench/bench_staff_pages.py [--calls 1000000] [--shows 10000] [--days 100] [--rounds 3]
        [--reload] [--database sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import atexit
import datetime
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, family_cpu_seconds, parse_per_database, postgres_cluster  # noqa: E402

CACHE_DIR = ROOT / "var" / "bench-cache"
PG_CACHE_DATABASE = "benchcache_staff_pages"  # not bench_*: common.postgres_database drops and counts those
SHOW_PREFIX = "sb"  # public IDs of the benchmark's own shows
SHOWS_VERSION = "2"  # the first film's description: a cached database with other shows is reloaded
GOAL_MS, GOAL_RATIO = 300, 2.0


def progress(done: int, total: int, started: float, what: str) -> None:
    elapsed = time.perf_counter() - started
    rate = done / elapsed if elapsed else 0
    left = (total - done) / rate if rate else 0
    print(f"\r  {what}: {done:>10,} / {total:,}  ({rate:,.0f}/s, ~{left:.0f} s left)   ", end="", flush=True)
    if done >= total:
        print(flush=True)


def stop_postgres(env: dict[str, str]) -> None:
    from django.db import connections

    connections.close_all()
    subprocess.run([ROOT / "scripts/testpg", "stop"], env=env, check=False)


def point_at_database(postgres: bool) -> None:
    """DATABASE_URL of the benchmark's own cached database (created if missing); settings read it at setup."""
    os.environ["MCPSITE_VAR_DIR"] = var_dir = tempfile.mkdtemp(prefix="bench-staff-pages-")
    atexit.register(shutil.rmtree, var_dir, True)
    if not postgres:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{CACHE_DIR / 'staff-pages.sqlite3'}"
        return
    import psycopg

    admin_url, env, started = postgres_cluster("staff-pages")
    if started:  # stopped again at exit; the cached database stays in the cluster's data directory
        atexit.register(stop_postgres, env)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [PG_CACHE_DATABASE]).fetchone():
            conn.execute(f'CREATE DATABASE "{PG_CACHE_DATABASE}"')
    os.environ["DATABASE_URL"] = admin_url.rsplit("/", 1)[0] + "/" + PG_CACHE_DATABASE


# --- loading ---------------------------------------------------------------------------------------------------


def tool_call_rows(*, calls: int, days: int, newest: datetime.datetime, keys: list[int]) -> Iterator[tuple]:
    """(created_at, api_key_id, transport, tool, duration_ms, outcome, error_code, request_id), oldest first."""
    step = datetime.timedelta(days=days) / calls
    for i in range(calls):
        failed = i % 13 == 0
        yield (
            newest - step * (calls - 1 - i),
            keys[i % len(keys)] if i % 50 else None,  # 1 in 50 over stdio, no key
            "stdio" if i % 50 == 0 else "http",
            f"tool_{i % 20}",
            (i * 7919) % 997,
            "error" if failed else "ok",
            "invalid_argument" if failed else "",
            f"req-{i:08d}",
        )


def load_tool_calls(*, calls: int, days: int, keys: list[int]) -> None:
    """Bulk-insert the tool calls: COPY on PostgreSQL, executemany in batches on SQLite (not the ORM: a million
    model instances take several times longer, and this is about reading them)."""
    from django.db import connection, transaction

    from mcpsite.models import ToolCall

    fields = ["created_at", "api_key", "transport", "tool", "duration_ms", "outcome", "error_code", "request_id"]
    columns = [ToolCall._meta.get_field(f).column for f in fields]
    table = ToolCall._meta.db_table
    rows = tool_call_rows(calls=calls, days=days, newest=datetime.datetime.now(datetime.UTC), keys=keys)
    started, batch = time.perf_counter(), 50_000
    if connection.vendor == "postgresql":
        copy_sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        with transaction.atomic(), connection.cursor() as cursor, cursor.cursor.copy(copy_sql) as copy:
            for i, row in enumerate(rows, 1):
                copy.write_row(row)
                if i % batch == 0 or i == calls:
                    progress(i, calls, started, "tool calls (COPY)")
        return
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})"
    adapt = connection.ops.adapt_datetimefield_value
    done = 0
    while done < calls:
        chunk = [(adapt(r[0]), *r[1:]) for _, r in zip(range(batch), rows, strict=False)]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(sql, chunk)
        done += len(chunk)
        progress(done, calls, started, "tool calls (executemany)")


SHOWS_A_DAY = 50  # 10 theaters, 5 shows a day each


def load_shows(*, shows: int) -> None:
    """`shows` shows in 10 theaters of 100 seats, five a day each, on as many days as that takes around today
    (200 for 10,000), each with 0-4 reservations of 1-3 seats (a few cancelled)."""
    from django.db import transaction
    from django.utils import timezone

    from cinema.models import Movie, Reservation, ReservedSeat, Schedule, Seat, Theater

    started = time.perf_counter()
    with transaction.atomic():
        movies = [
            Movie.objects.create(
                public_id=f"mb{i}", title=f"負荷試験 {i}", duration=100, rating="4.0", description=SHOWS_VERSION
            )
            for i in range(20)
        ]
        theaters = [
            Theater.objects.create(public_id=f"tb{i}", name=f"負荷 {i}", rows=10, columns=10) for i in range(10)
        ]
        Seat.objects.bulk_create(
            Seat(theater=t, row=r, column=c, label=f"{r}{c}")
            for t in theaters
            for r in "ABCDEFGHIJ"
            for c in range(1, 11)
        )
    seats = {t.pk: list(Seat.objects.filter(theater=t).order_by("row", "column")) for t in theaters}
    first_day = shows_first_day(shows)
    now = timezone.now()

    def starts(show: Schedule) -> datetime.datetime:
        return timezone.make_aware(datetime.datetime.combine(show.date, show.start_time))

    batch = 1_000
    for first in range(0, shows, batch):
        with transaction.atomic():
            made = Schedule.objects.bulk_create(
                Schedule(
                    public_id=f"{SHOW_PREFIX}{i}",
                    movie=movies[i % len(movies)],
                    theater=theaters[i % 10],
                    date=first_day + datetime.timedelta(days=i // SHOWS_A_DAY),
                    start_time=datetime.time(9 + i % SHOWS_A_DAY // 10 * 3),
                    end_time=datetime.time(23, 0),
                )
                for i in range(first, min(first + batch, shows))
            )
            reservations = Reservation.objects.bulk_create(
                Reservation(
                    public_id=f"rb{s.pk}-{n}",
                    schedule=s,
                    customer_name=f"客 {n}",
                    password_hash="x",
                    reserved_at=min(now, starts(s) - datetime.timedelta(days=n + 1)),
                    **cancelled,
                )
                for s in made
                for n in range(s.pk % 5)
                for cancelled in [
                    {"status": "cancelled", "cancelled_at": now, "cancel_source": "customer"}
                    if (s.pk + n) % 17 == 0
                    else {}
                ]
            )
            ReservedSeat.objects.bulk_create(
                ReservedSeat(
                    reservation=r,
                    schedule=r.schedule,
                    seat=seats[r.schedule.theater_id][int(r.public_id.rsplit("-", 1)[1]) * 3 + k],
                    active=r.status != "cancelled",
                )
                for r in reservations
                for k in range(1 + r.schedule_id % 3)
            )
        progress(min(first + batch, shows), shows, started, "shows")


def shows_first_day(shows: int) -> datetime.date:
    from django.utils import timezone

    return timezone.localdate() - datetime.timedelta(days=shows // SHOWS_A_DAY // 2)


def ensure_data(*, calls: int, shows: int, days: int, reload: bool) -> None:
    """The database holds exactly the benchmark's data, loaded now or earlier (then moved to the present)."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import F, Max
    from django.utils import timezone

    from cinema.models import Movie, Reservation, ReservedSeat, Schedule, Seat, Theater
    from mcpsite.models import ApiKey, ToolCall

    print(f"[{connection.vendor}] migrating the benchmark's database ({connection.settings_dict['NAME']})", flush=True)
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    users = get_user_model()
    owner, _ = users.objects.get_or_create(username="bench-owner")

    have_calls = ToolCall.objects.count()
    if reload or have_calls != calls:
        print(f"[{connection.vendor}] loading {calls:,} tool calls over {days} days (had {have_calls:,})", flush=True)
        ToolCall.objects.all().delete()
        ApiKey.objects.filter(prefix__startswith="bench").delete()
        keys = [
            ApiKey.objects.create(
                name=f"bench key {i}", owner=owner, prefix=f"bench{i}", digest=f"{i}".zfill(64), scopes=["cinema"]
            ).pk
            for i in range(5)
        ]
        load_tool_calls(calls=calls, days=days, keys=keys)
    else:
        newest = ToolCall.objects.aggregate(newest=Max("created_at"))["newest"]
        behind = timezone.now() - newest
        if behind > datetime.timedelta(minutes=10):
            print(f"[{connection.vendor}] moving the cached tool calls forward by {behind}", flush=True)
            ToolCall.objects.update(created_at=F("created_at") + behind)

    ours = Schedule.objects.filter(public_id__startswith=SHOW_PREFIX)
    first_day = shows_first_day(shows)
    current = (
        ours.filter(date=first_day).exists()
        and Movie.objects.filter(public_id="mb0", description=SHOWS_VERSION).exists()
    )
    if reload or ours.count() != shows or not current:
        print(f"[{connection.vendor}] loading {shows:,} shows", flush=True)
        ReservedSeat.objects.filter(schedule__public_id__startswith=SHOW_PREFIX).delete()
        Reservation.objects.filter(schedule__public_id__startswith=SHOW_PREFIX).delete()
        ours.delete()
        Seat.objects.filter(theater__public_id__startswith="tb").delete()
        Theater.objects.filter(public_id__startswith="tb").delete()
        Movie.objects.filter(public_id__startswith="mb").delete()
        load_shows(shows=shows)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    else:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def staff_users() -> dict[str, object]:
    """A superuser, and a staff member in a group with every view permission and nothing else."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group, Permission

    users = get_user_model()
    admin = users.objects.filter(username="bench-admin").first() or users.objects.create_superuser(
        username="bench-admin", password="x" * 16
    )
    group, _ = Group.objects.get_or_create(name="bench view only")
    group.permissions.set(Permission.objects.filter(codename__startswith="view_"))
    viewer, _ = users.objects.get_or_create(username="bench-viewer", defaults={"is_staff": True})
    viewer.groups.add(group)
    return {"superuser": admin, "view-only": viewer}


# --- measuring -------------------------------------------------------------------------------------------------


def page_queries(fn: Callable[[], object]) -> list[tuple[str, object]]:
    """The SQL statements (with their parameters) that fn runs."""
    from django.db import connection

    seen: list[tuple[str, object]] = []

    def record(execute, sql, params, many, context):
        seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        fn()
    return seen


def run_queries(queries: list[tuple[str, object]]) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for sql, params in queries:
            cursor.execute(sql, params)
            if cursor.description is not None:
                cursor.fetchall()


def print_queries(queries: list[tuple[str, object]]) -> None:
    """The eight slowest queries of a page (one run each) with their times: where its database time goes."""
    timed = []
    for query in queries:
        started = time.perf_counter()
        run_queries([query])
        timed.append((time.perf_counter() - started, query))
    for seconds, (sql, params) in sorted(timed, key=lambda t: -t[0])[:8]:
        print(f"    {seconds * 1000:8.1f} ms  {sql[:400]}  {str(params)[:120]}")


def cpu_clock() -> Callable[[], float]:
    """CPU seconds so far of this process (Django, and SQLite inside it) plus, on PostgreSQL, of the server (its
    postmaster and backends: the cluster is this benchmark's alone). Unlike wall-clock time, this is barely moved by
    other work on a shared machine."""
    from django.db import connection

    def own() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    if connection.vendor != "postgresql":
        return own
    with connection.cursor() as cursor:
        cursor.execute("SELECT setting FROM pg_settings WHERE name = 'data_directory'")
        data_directory = Path(cursor.fetchone()[0])
    postmaster = int((data_directory / "postmaster.pid").read_text().split()[0])
    return lambda: own() + family_cpu_seconds(postmaster)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--shows", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reload", action="store_true", help="load the data afresh even if the cache matches")
    parser.add_argument("--page", action="append", help="measure only these pages (by label; repeatable)")
    parser.add_argument("--queries", action="store_true", help="also print each query of a page with its time")
    args = parse_per_database(parser, __file__)
    if args is None:
        return

    point_at_database(args.database == "postgres")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.utils import timezone

    ensure_data(calls=args.calls, shows=args.shows, days=args.days, reload=args.reload)
    today = timezone.localdate()
    pages = {
        "tool calls": "/admin/mcpsite/toolcall/",
        "tool calls, one day": (
            f"/admin/mcpsite/toolcall/?created_at__year={today.year}"
            f"&created_at__month={today.month}&created_at__day={today.day}"
        ),
        "admin index (dashboard)": "/admin/",
        "schedules": "/admin/cinema/schedule/",
        # The admin's own floor: the same list with no row to show (a year before the data), chrome and filters only.
        "tool calls, no rows": "/admin/mcpsite/toolcall/?created_at__year=2000",
    }
    if args.page:
        pages = {label: url for label, url in pages.items() if label in args.page}
    clients = {}
    for role, user in staff_users().items():
        clients[role] = client = Client()
        client.force_login(user)

    print(
        f"[{connection.vendor}] {args.rounds} rounds after a warm-up, medians in ms: wall clock and CPU time (this "
        f"process{' and the PostgreSQL server' if connection.vendor == 'postgresql' else ''}) of the page and of "
        f"its SQL alone, executed again; rest = page CPU - SQL CPU (Django's own work); n = queries",
        flush=True,
    )
    cpu = cpu_clock()
    print(
        f"{'page':<24} {'user':<10} {'page':>7} {'cpu':>6} | {'SQL':>6} {'cpu':>6} | {'ratio':>6} {'cpu':>6} | "
        f"{'rest':>5} | {'n':>3}"
    )
    for label, url in pages.items():
        for role, client in clients.items():

            def get(client: Client = client, url: str = url) -> None:
                response = client.get(url)
                assert response.status_code == 200, (url, response.status_code)

            get()  # warm up
            queries = page_queries(get)
            run_queries(queries)  # warm up
            samples: dict[str, list[float]] = {"page": [], "page cpu": [], "sql": [], "sql cpu": []}
            for _ in range(args.rounds):
                for name, fn in [("page", get), ("sql", lambda q=queries: run_queries(q))]:
                    started, started_cpu = time.perf_counter(), cpu()
                    fn()
                    samples[name].append(time.perf_counter() - started)
                    samples[f"{name} cpu"].append(cpu() - started_cpu)
            if args.queries:
                print_queries(queries)
            ms = {name: statistics.median(values) * 1000 for name, values in samples.items()}
            ratio, cpu_ratio = ms["page"] / ms["sql"], ms["page cpu"] / max(ms["sql cpu"], 1)
            over = [
                f"{name} > {goal:g}"
                for name, value, goal in [
                    ("page", ms["page"], GOAL_MS),
                    ("CPU", ms["page cpu"], GOAL_MS),
                    ("ratio", ratio, GOAL_RATIO),
                    ("CPU ratio", cpu_ratio, GOAL_RATIO),
                ]
                if value > goal
            ]
            flag = f"  ({', '.join(over)})" if over else ""
            print(
                f"{label:<24} {role:<10} {ms['page']:7.0f} {ms['page cpu']:6.0f} | {ms['sql']:6.0f} "
                f"{ms['sql cpu']:6.0f} | {ratio:6.2f} {cpu_ratio:6.2f} | {ms['page cpu'] - ms['sql cpu']:5.0f} | "
                f"{len(queries):3d}{flag}",
                flush=True,
            )
    print(
        f"goal: every page ≤ {GOAL_MS} ms and ≤ {GOAL_RATIO:g}× its queries (on a shared machine, judge by CPU time: "
        f"wall-clock time there includes waiting for the cores)"
    )


if __name__ == "__main__":
    main()
