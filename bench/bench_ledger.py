"""Ledger benchmark: the balance sheet at 1,000,000 lines against one hand-written SQL GROUP BY.

Standalone: for each database (SQLite, and PostgreSQL from `scripts/testpg` on $TESTPG_PORT; one child
process each, since Django binds one database per process) makes its own MCPSITE_VAR_DIR and a fresh,
migrated database, seeds the chart of accounts and N two-line entries with `seed_ledger --scale`, then
times, interleaved (these machines are noisy), the `generate_balance_sheet` selector and a single raw
`SELECT account_id, SUM(debit), SUM(credit) ... GROUP BY account_id` on the same data, and prints the
ratio and the memory the selector needs (tracemalloc peak of one call; the process's peak RSS).
Usage: python bench/bench_ledger.py [--entries 500000] [--repeat 5] [--database sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
import tracemalloc
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, parse_per_database, peak_rss_mib  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=500_000, help="two-line entries (default 500,000 = 1M lines)")
    parser.add_argument("--repeat", type=int, default=3)
    options = parse_per_database(parser, __file__)
    if options is None:
        return

    started = time.perf_counter()
    postgres = options.database == "postgres"
    boot("ledger", postgres=postgres)  # its own var dir and a fresh migrated database, removed at exit
    from django.core.management import call_command
    from django.db import connection

    from ledger import selectors

    call_command("seed_ledger", "--no-sample", "--scale", str(options.entries), verbosity=1)
    print(f"Seeded in {time.perf_counter() - started:.1f} s", flush=True)

    as_of = datetime.date(2026, 3, 31)

    def orm() -> Decimal:
        sheet = selectors.balance_sheet(as_of=as_of)
        assert sheet.verified
        return sheet.assets.total

    # Whole cents as integers on SQLite, as the selector does (REAL sums drift by cents); numeric on PostgreSQL.
    cents = "SUM(CAST(ROUND(l.{0} * 100) AS INTEGER))" if not postgres else "SUM(l.{0})"

    def raw() -> Decimal:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT a.type, {cents.format('debit')} - {cents.format('credit')} "
                "FROM ledger_journalline l "
                "JOIN ledger_journalentry e ON e.id = l.entry_id JOIN ledger_account a ON a.id = l.account_id "
                "WHERE e.date <= %s GROUP BY l.account_id, a.type",
                [as_of.isoformat()],
            )
            rows = cursor.fetchall()
        if postgres:
            return sum((v for t, v in rows if t == "asset"), Decimal(0))
        return sum((Decimal(v).scaleb(-2) for t, v in rows if t == "asset"), Decimal(0))

    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM ledger_journalline")
        (lines,) = cursor.fetchone()
    print(f"Lines: {lines:,}", flush=True)
    assert orm() == raw(), "the two computations disagree"
    rss_before = peak_rss_mib()
    tracemalloc.start()
    orm()
    _current, selector_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    timings: dict[str, list[float]] = {"balance sheet (selector)": [], "hand-written GROUP BY": []}
    for i in range(options.repeat):
        for name, func in (("balance sheet (selector)", orm), ("hand-written GROUP BY", raw)):
            t = time.perf_counter()
            func()
            timings[name].append(time.perf_counter() - t)
        print(f"  round {i + 1}/{options.repeat} done", flush=True)
    base = statistics.median(timings["hand-written GROUP BY"])
    print(f"\n{connection.vendor}, {lines:,} lines, median of {options.repeat} interleaved rounds")
    print(f"{'measure':<28}{'median s':>10}{'ratio':>8}")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"{name:<28}{median:>10.3f}{median / base:>8.2f}")
    print(
        f"memory: one balance sheet allocates at most {selector_peak / 1024:.0f} KiB of Python objects (tracemalloc);"
        f" peak RSS {rss_before:.0f} MiB after seeding, {peak_rss_mib():.0f} MiB after the timed rounds"
    )
    print(f"\nTotal {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
