"""Benchmark: the staff's pages at 1,000 rows and at a million, SQLite and PostgreSQL.

The large scale: 1,000,000 tool calls, 10,000 shows (about 20,000 reservations) and 1,000,000 journal lines
(500,000 two-line entries); the small one: 1,000 of each (1,000 lines: 500 entries). Every page below is fetched as
a superuser through Django's test client in the process (no network), the median of `--rounds` rounds after a
warm-up, and printed as its server time (wall clock) and CPU time (this process, plus the PostgreSQL server's), at
each scale, with the difference. The goal (docs/staff-pages.md, "Large lists"): every page <= 300 ms at the large
scale, and within 60 ms of the same page at the small one.

The pages: the journal-entry list (as it opens, and filtered by one account: 現金, on 3 lines in 10), the
reservation list, the tool-call list (as it opens, one day of its date hierarchy: yesterday, a full page of 100 calls
at both scales, and a search by request id), the schedule list, the balance sheet, the trial balance, the income
statement, and the admin index with the dashboard.

One child process per database and scale (Django binds one database per process); `--passes N` runs them N times
in turn and prints each page's median over the passes, so both scales meet the same spells of load. The data lives
in the benchmark's own databases, kept between runs because loading a million rows takes minutes (with progress):
`var/bench-cache/staff-pages-<scale>.sqlite3`, and the database `benchcache_staff_pages_<scale>` on the throwaway
cluster of `scripts/testpg` ($TESTPG_PORT); never the development database. A cached database is migrated, its
row counts and its tool calls' spread over days checked (reloaded if they differ), and its tool calls moved forward
in time so the newest is a second old, as on a fresh load (the dashboard reads the last 24 hours). `--reload`
loads afresh.

    .venv/bin/python bench/bench_staff_pages.py [--rounds 3] [--reload] [--database sqlite|postgres|both]
        [--scale small|large|both] [--passes 1] [--page LABEL ...] [--queries]
"""

from __future__ import annotations

import argparse
import atexit
import datetime
import json
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
from common import DATABASES, ROOT, family_cpu_seconds, postgres_cluster  # noqa: E402

CACHE_DIR = ROOT / "var" / "bench-cache"
PG_CACHE_DATABASE = "benchcache_staff_pages_{scale}"  # not bench_*: common.postgres_database drops and counts those
SHOW_PREFIX = "sb"  # public IDs of the benchmark's own shows
SHOWS_VERSION = "2"  # the first film's description: a cached database with other shows is reloaded
GOAL_MS, GOAL_MORE_MS = 300, 60
# rows of each kind: tool calls, shows, journal lines
SCALES = {"small": (1_000, 1_000, 1_000), "large": (1_000_000, 10_000, 1_000_000)}
# The tool calls are spread evenly over the last days: at a million, 10,000 a day; at 1,000, 125 a day, so that
# one day of the date hierarchy (yesterday, a whole day) lists a full page of 100 calls at both scales.
CALL_DAYS = {"small": 8, "large": 100}


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


def point_at_database(postgres: bool, scale: str) -> None:
    """DATABASE_URL of the benchmark's own cached database (created if missing); settings read it at setup."""
    os.environ["MCPSITE_VAR_DIR"] = var_dir = tempfile.mkdtemp(prefix="bench-staff-pages-")
    # Loading is one long COPY or INSERT per kind of row: longer than the site's bound on a statement, on a busy
    # machine. The pages measured run far below it.
    os.environ["DATABASE_STATEMENT_TIMEOUT"] = "0"
    atexit.register(shutil.rmtree, var_dir, True)
    if not postgres:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{CACHE_DIR / f'staff-pages-{scale}.sqlite3'}"
        return
    import psycopg

    admin_url, env, started = postgres_cluster("staff-pages")
    if started:  # stopped again at exit; the cached database stays in the cluster's data directory
        atexit.register(stop_postgres, env)
    database = PG_CACHE_DATABASE.format(scale=scale)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone():
            conn.execute(f'CREATE DATABASE "{database}"')
    os.environ["DATABASE_URL"] = admin_url.rsplit("/", 1)[0] + "/" + database


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
                    # 9:00, 12:00, ... 21:00, each ending before the next starts (shows in a theater never overlap)
                    start_time=datetime.time(9 + i % SHOWS_A_DAY // 10 * 3),
                    end_time=datetime.time(11 + i % SHOWS_A_DAY // 10 * 3, 50),
                )
                for i in range(first, min(first + batch, shows))
            )
            reservations = Reservation.objects.bulk_create(
                Reservation(
                    public_id=f"rb{s.pk}-{n}",
                    schedule=s,
                    customer_name=f"客 {n}",
                    customer_key=f"客 {n}",  # search_key of the name (bulk_create skips save())
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


def load_journal(*, lines: int) -> None:
    """`lines` journal lines: the chart of accounts and `lines // 2` generated two-line entries over one fiscal
    year (ledger.seeding, bulk inserts in batches of 5,000 entries; the balance triggers check each batch)."""
    from ledger import seeding

    seeding.chart_of_accounts_ensure()
    entries, started, done = lines // 2, time.perf_counter(), 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        progress(done, entries, started, "journal entries")

    seeding.scale_entries_ensure(entries, progress=step)


def journal_empty() -> None:
    """Remove every journal entry and line: posted rows refuse DELETE on PostgreSQL (triggers), TRUNCATE is no row
    operation."""
    from django.apps import apps
    from django.db import connection

    tables = [m._meta.db_table for m in apps.get_app_config("ledger").get_models() if m.__name__ != "Account"]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"TRUNCATE {', '.join(tables)}")
        else:
            for table in sorted(tables, key=lambda t: t.endswith("entry")):  # lines before their entries
                cursor.execute(f"DELETE FROM {table}")


def ensure_data(*, calls: int, shows: int, lines: int, days: int, reload: bool) -> None:
    """The database holds exactly the benchmark's data, loaded now or earlier (then moved to the present)."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import F, Max, Min
    from django.utils import timezone

    from cinema.models import Movie, Reservation, ReservedSeat, Schedule, Seat, Theater
    from mcpsite.models import ApiKey, ToolCall

    print(f"[{connection.vendor}] migrating the benchmark's database ({connection.settings_dict['NAME']})", flush=True)
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    users = get_user_model()
    owner, _ = users.objects.get_or_create(username="bench-owner")

    have_calls = ToolCall.objects.count()
    span = ToolCall.objects.aggregate(span=Max("created_at") - Min("created_at"))["span"]
    if reload or have_calls != calls or abs(span - datetime.timedelta(days=days)) > datetime.timedelta(hours=1):
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

    from ledger.models import JournalEntry, JournalLine

    have_entries = JournalEntry.objects.count()
    if reload or have_entries != lines // 2 or JournalLine.objects.count() != lines:
        print(f"[{connection.vendor}] loading {lines:,} journal lines (had {have_entries:,} entries)", flush=True)
        journal_empty()
        load_journal(lines=lines)
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


def pages(*, scale: str) -> dict[str, str]:
    """The pages measured, by label."""
    from django.utils import timezone

    yesterday = timezone.localdate() - datetime.timedelta(days=1)
    calls = SCALES[scale][0]
    return {
        "journal entries": "/admin/ledger/journalentry/",
        "journal entries, 現金": "/admin/ledger/journalentry/?account=100",
        "reservations": "/admin/cinema/reservation/",
        "tool calls": "/admin/mcpsite/toolcall/",
        "tool calls, one day": (
            f"/admin/mcpsite/toolcall/?created_at__year={yesterday.year}"
            f"&created_at__month={yesterday.month}&created_at__day={yesterday.day}"
        ),
        "tool calls, request id": f"/admin/mcpsite/toolcall/?q=req-{calls // 2:08d}",
        "schedules": "/admin/cinema/schedule/",
        "balance sheet": "/admin/ledger/account/reports/balance-sheet/",
        "trial balance": "/admin/ledger/account/reports/trial-balance/",
        "income statement": "/admin/ledger/account/reports/income-statement/",
        "admin index (dashboard)": "/admin/",
        # The header's search box: a short term in a fifth of the entries, and a name nothing holds.
        "search, 売上": "/admin/search/?q=売上",
        "search, no match": "/admin/search/?q=存在しない名前",
    }


def measure(args: argparse.Namespace) -> None:
    """One database and scale: load (or reuse) its data, fetch each page, print and save the medians."""
    point_at_database(args.database == "postgres", args.scale)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.db import connection
    from django.test import Client

    calls, shows, lines = SCALES[args.scale]
    ensure_data(calls=calls, shows=shows, lines=lines, days=CALL_DAYS[args.scale], reload=args.reload)
    client = Client()
    client.force_login(staff_users()["superuser"])
    cpu = cpu_clock()
    results = {}
    print(
        f"[{connection.vendor}, {args.scale}] {args.rounds} rounds after a warm-up, medians (ms): wall, CPU", flush=True
    )
    for label, url in pages(scale=args.scale).items():
        if args.page and label not in args.page:
            continue

        def get(url: str = url) -> None:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)

        get()  # warm up
        wall, used = [], []
        for _ in range(args.rounds):
            started, started_cpu = time.perf_counter(), cpu()
            get()
            wall.append(time.perf_counter() - started)
            used.append(cpu() - started_cpu)
        results[label] = [statistics.median(wall) * 1000, statistics.median(used) * 1000]
        print(f"  {label:<26} {results[label][0]:7.0f} {results[label][1]:7.0f}", flush=True)
        if args.queries:
            print_queries(page_queries(get))
    if args.json:
        Path(args.json).write_text(json.dumps(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--passes", type=int, default=1, help="measure each database and scale N times, in turn")
    parser.add_argument("--reload", action="store_true", help="load the data afresh even if the cache matches")
    parser.add_argument("--page", action="append", help="measure only these pages (by label; repeatable)")
    parser.add_argument("--queries", action="store_true", help="also print each page's slowest queries")
    parser.add_argument("--database", choices=[*DATABASES, "both"], default="both")
    parser.add_argument("--scale", choices=[*SCALES, "both"], default="both")
    parser.add_argument("--json", help=argparse.SUPPRESS)  # a child's results, for its parent's table
    args = parser.parse_args()
    if args.database != "both" and args.scale != "both":
        measure(args)
        return
    # One child per database and scale, pass after pass (a page's figures at both scales are then taken alternately,
    # through the same spells of load on a shared machine); then each page's median over the passes, side by side.
    runs: dict[tuple[str, str], list[dict[str, list[float]]]] = {}
    out = Path(tempfile.mkdtemp(prefix="bench-staff-pages-"))
    atexit.register(shutil.rmtree, out, True)
    own = ("--database", "--scale", "--passes")
    child = [
        a
        for a, before in zip(sys.argv[1:], ["", *sys.argv[1:]], strict=False)
        if not a.startswith(own) and before not in own
    ]
    for n in range(args.passes):
        for database in DATABASES if args.database == "both" else [args.database]:
            for scale in SCALES if args.scale == "both" else [args.scale]:
                print(f"=== {database}, {scale}, pass {n + 1} of {args.passes}", flush=True)
                json_path = out / f"{database}-{scale}-{n}.json"
                again = [a for a in child if a != "--reload"] if n else child  # loaded afresh once
                command = [sys.executable, __file__, *again, "--database", database, "--scale", scale]
                subprocess.run([*command, "--json", str(json_path)], check=True)
                runs.setdefault((database, scale), []).append(json.loads(json_path.read_text()))
    results = {
        where: {label: [statistics.median(run[label][i] for run in passes) for i in range(2)] for label in passes[0]}
        for where, passes in runs.items()
    }
    print(
        "server time per page in ms, wall / CPU (medians over the passes); at 1,000 rows, at 1,000,000 (10,000 shows), "
        "and the difference"
    )
    for database in DATABASES:
        small, large = results.get((database, "small"), {}), results.get((database, "large"), {})
        if not small and not large:
            continue
        print(f"{database:<26} {'1,000 rows':>13} | {'a million':>13} | {'more':>11}")
        for label in {**small, **large}:
            s, big = small.get(label), large.get(label)
            cells = [f"{v[0]:5.0f} / {v[1]:5.0f}" if v else f"{'-':>13}" for v in (s, big)]
            more = f"{big[0] - s[0]:+5.0f} / {big[1] - s[1]:+4.0f}" if s and big else f"{'-':>11}"
            over = [] if not big else [f"> {GOAL_MS} ms" for v in big if v > GOAL_MS][:1]
            if s and big and big[1] - s[1] > GOAL_MORE_MS:
                over.append(f"> +{GOAL_MORE_MS} ms")
            print(f"  {label:<24} {cells[0]} | {cells[1]} | {more}{'  (' + ', '.join(over) + ')' if over else ''}")
    print(
        f"goal: every page <= {GOAL_MS} ms at a million rows and within {GOAL_MORE_MS} ms of itself at 1,000 (on a "
        "shared machine judge by CPU time: wall time there includes waiting for the cores)"
    )


if __name__ == "__main__":
    main()
