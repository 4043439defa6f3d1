"""Benchmark: the admin index with the staff dashboard at 1,000 shows and 100,000 tool calls (the scale the query
count test uses), SQLite and PostgreSQL.

One child process per database (Django binds one per process); PostgreSQL is a fresh database on the throwaway
cluster of `scripts/testpg` ($TESTPG_PORT). Prints, side by side in one run, the superuser's admin index (every
block) against the same index for a staff member with no dashboard block (Django's app list alone, the baseline),
in milliseconds and as a ratio, plus the dashboard's blocks on their own and its query count.

    .venv/bin/python bench/bench_dashboard.py [--shows 1000] [--calls 100000] [--rounds 15]
        [--database sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, p95, parse_per_database, report  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shows", type=int, default=1_000)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parse_per_database(parser, __file__)
    if args is None:
        return

    boot("dashboard", postgres=args.database == "postgres")
    import io

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from mcpsite.dashboard import dashboard_build
    from mcpsite.tests.test_dashboard import add_shows_and_calls

    print("seeding the demo data …", flush=True)
    call_command("seed_demo", stdout=io.StringIO(), stderr=io.StringIO())
    users = get_user_model()
    admin = users.objects.create_superuser(username="bench-admin", password="x" * 16)
    plain = users.objects.create_user(username="bench-staff", password="x" * 16, is_staff=True)
    print(f"adding {args.shows:,} shows and {args.calls:,} tool calls …", flush=True)
    started = time.perf_counter()
    add_shows_and_calls(shows=args.shows, calls=args.calls, owner=admin)
    print(f"seeded in {time.perf_counter() - started:.1f} s", flush=True)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")

    dashboard, baseline = Client(), Client()
    dashboard.force_login(admin)
    baseline.force_login(plain)

    def index(client) -> None:
        response = client.get("/admin/")
        assert response.status_code == 200

    with CaptureQueriesContext(connection) as queries:
        index(dashboard)
    with CaptureQueriesContext(connection) as built:
        dashboard_build(user=admin, now=timezone.now())
    print(f"queries: admin index {len(queries)}, dashboard blocks {len(built)}", flush=True)

    # Alternate the two pages round by round (these machines are noisy).
    ours: list[float] = []
    theirs: list[float] = []
    blocks: list[float] = []
    index(dashboard), index(baseline)  # warm up
    for round_ in range(args.rounds):
        for samples, fn in [(ours, lambda: index(dashboard)), (theirs, lambda: index(baseline))]:
            started = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - started)
        started = time.perf_counter()
        dashboard_build(user=admin, now=timezone.now())
        blocks.append(time.perf_counter() - started)
        print(f"  round {round_ + 1}/{args.rounds}: {ours[-1] * 1000:.0f} ms vs {theirs[-1] * 1000:.0f} ms", flush=True)
    report("admin index with the dashboard", ours, theirs, "app list alone")
    print(
        f"dashboard blocks alone: median {statistics.median(blocks) * 1000:.1f} ms  p95 {p95(blocks) * 1000:.1f} ms",
        flush=True,
    )


if __name__ == "__main__":
    main()
