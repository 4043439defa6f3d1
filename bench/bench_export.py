"""Benchmark: the journal-entry CSV export streams 1,000,000 journal lines in constant memory, SQLite and
PostgreSQL.

One child process per database (Django binds one per process). Loads `--lines` journal lines (two per entry,
bulk-inserted), then reads the whole export (`/admin/ledger/journalentry/export.csv`, as a superuser) through
Django's test client chunk by chunk, sampling this process's resident memory (VmRSS): it prints the RSS before the
export, after the first 10 % of the lines and at the end (the growth from 10 % to 100 % is what a non-streaming
export would multiply), the rows and bytes written and the time.

    .venv/bin/python bench/bench_export.py [--lines 1000000] [--database sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, parse_per_database  # noqa: E402


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parse_per_database(parser, __file__)
    if args is None:
        return

    boot("export", postgres=args.database == "postgres")
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.test import Client

    from ledger.models import Account, JournalEntry, JournalLine
    from ledger.seeding import chart_of_accounts_ensure

    chart_of_accounts_ensure()
    cash, sales = Account.objects.get(code="100"), Account.objects.get(code="400")
    entries = args.lines // 2
    print(f"[{connection.vendor}] loading {entries:,} entries, {entries * 2:,} lines …", flush=True)
    started = time.perf_counter()
    start_day = datetime.date(2020, 4, 1)
    batch = 10_000
    for first in range(0, entries, batch):
        made = [
            JournalEntry(id=uuid.uuid4(), date=start_day + datetime.timedelta(days=i % 2000), description=f"売上 {i}")
            for i in range(first, min(first + batch, entries))
        ]
        amount = Decimal("1234.50")
        with transaction.atomic():  # PostgreSQL checks each entry's balance when the transaction commits
            JournalEntry.objects.bulk_create(made)
            JournalLine.objects.bulk_create(
                [JournalLine(entry=e, line_no=0, account=cash, debit=amount) for e in made]
                + [JournalLine(entry=e, line_no=1, account=sales, credit=amount) for e in made]
            )
    print(f"loaded in {time.perf_counter() - started:.0f} s", flush=True)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")

    client = Client()
    client.force_login(get_user_model().objects.create_superuser(username="bench-admin", password="x" * 16))
    before = rss_mib()
    started = time.perf_counter()
    response = client.get("/admin/ledger/journalentry/export.csv")
    rows, size, at_tenth, peak = -1, 0, None, before
    for chunk in response.streaming_content:
        rows += 1
        size += len(chunk)
        if rows % 20_000 == 0:
            peak = max(peak, rss_mib())
        if at_tenth is None and rows >= args.lines // 10:
            at_tenth = rss_mib()
    elapsed = time.perf_counter() - started
    after = rss_mib()
    peak = max(peak, after)
    assert rows == entries * 2, rows
    print(f"[{connection.vendor}] exported {rows:,} lines, {size / 2**20:.0f} MiB of CSV in {elapsed:.1f} s")
    print(
        f"[{connection.vendor}] RSS: before {before:.0f} MiB, after 10 % {at_tenth:.0f} MiB, at the end {after:.0f} MiB"
        f" (peak {peak:.0f} MiB): growth from 10 % to 100 % of the lines {after - (at_tenth or after):+.0f} MiB"
    )


if __name__ == "__main__":
    main()
