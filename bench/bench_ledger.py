"""Ledger benchmark: the balance sheet at 1,000,000 lines against one hand-written SQL GROUP BY.

Standalone: makes its own MCPSITE_VAR_DIR, migrates a fresh SQLite database, seeds the chart of
accounts and N two-line entries with `seed_ledger --scale`, then times, in the same process and
interleaved (these machines are noisy), the `generate_balance_sheet` selector and a single raw
`SELECT account_id, SUM(debit), SUM(credit) ... GROUP BY account_id` on the same data, and prints
the ratio. Usage: python bench/bench_ledger.py [--entries 500000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=500_000, help="two-line entries (default 500,000 = 1M lines)")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()

    started = time.perf_counter()
    boot("ledger")  # its own var dir and a migrated SQLite database, removed at exit
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

    def raw() -> Decimal:
        with connection.cursor() as cursor:
            cursor.execute(
                # Whole cents as integers, as the selector does on SQLite (REAL sums drift by cents).
                "SELECT a.type, SUM(CAST(ROUND(l.debit * 100) AS INTEGER))"
                " - SUM(CAST(ROUND(l.credit * 100) AS INTEGER)) "
                "FROM ledger_journalline l "
                "JOIN ledger_journalentry e ON e.id = l.entry_id JOIN ledger_account a ON a.id = l.account_id "
                "WHERE e.date <= %s GROUP BY l.account_id, a.type",
                [as_of.isoformat()],
            )
            return sum((Decimal(v).scaleb(-2) for t, v in cursor.fetchall() if t == "asset"), Decimal(0))

    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM ledger_journalline")
        (lines,) = cursor.fetchone()
    print(f"Lines: {lines:,}", flush=True)
    assert abs(orm() - raw()) < Decimal("0.01"), "the two computations disagree"

    timings: dict[str, list[float]] = {"balance sheet (selector)": [], "hand-written GROUP BY": []}
    for i in range(options.repeat):
        for name, func in (("balance sheet (selector)", orm), ("hand-written GROUP BY", raw)):
            t = time.perf_counter()
            func()
            timings[name].append(time.perf_counter() - t)
        print(f"  round {i + 1}/{options.repeat} done", flush=True)
    base = statistics.median(timings["hand-written GROUP BY"])
    print(f"\n{'measure':<28}{'median s':>10}{'ratio':>8}")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"{name:<28}{median:>10.3f}{median / base:>8.2f}")
    print(f"\nTotal {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
