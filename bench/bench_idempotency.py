"""Benchmark: the cost of idempotency keys (docs/idempotency.md), through the real dispatcher (scope, rate limit,
schema validation, the idempotency stage, the tool, audit) as an API key calls it.

1. A keyed `create_journal_entry` (a new key each call: the claim, the write and the stored outcome in one
   transaction) against an unkeyed one; goal: keyed throughput ≥ 0.85 × unkeyed on PostgreSQL.
2. A replay (the same key and arguments again: the stored outcome read back) against an exact-lookup read of the
   same size, `get_account_balance` of one account; goal: a replay ≤ 2 × the read.

The two sides of each pair alternate call by call, so noise hits both alike. One child process per database;
PostgreSQL is a fresh database on `scripts/testpg`'s cluster ($TESTPG_PORT).

    .venv/bin/python bench/bench_idempotency.py [--calls 300] [--database sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, parse_per_database, report  # noqa: E402

ENTRY = {
    "date": "2026-11-28",
    "description": "商品仕入",
    "lines": [{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 10000}],
}


def alternate(first, second, calls: int) -> tuple[list[float], list[float]]:
    """Time `first()` and `second()` in turn, `calls` times each (after a few warm-up calls of each)."""
    for _ in range(5):
        first(), second()
    a, b = [], []
    for _ in range(calls):
        for fn, samples in ((first, a), (second, b)):
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
    return a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    args = parse_per_database(parser, __file__)
    if args is None:
        return
    boot("idempotency", postgres=args.database == "postgres")

    from django.contrib.auth import get_user_model

    from ledger import seeding
    from mcpsite.mcp import dispatch
    from mcpsite.mcp.idempotency import keyed
    from mcpsite.services import api_key_create

    seeding.chart_of_accounts_ensure()
    owner = get_user_model().objects.create_user(username="bench", email="bench@example.com")
    api_key, _raw = api_key_create(name="bench", owner=owner, scopes=["ledger"], rate="1000000/m")
    base = dispatch.call_context(transport="bench", api_key=api_key)

    def unkeyed() -> None:
        dispatch.call_tool(base, "create_journal_entry", ENTRY)

    def keyed_write() -> None:
        dispatch.call_tool(keyed(base, header=uuid.uuid4().hex), "create_journal_entry", ENTRY)

    replayed_key = uuid.uuid4().hex
    dispatch.call_tool(keyed(base, header=replayed_key), "create_journal_entry", ENTRY)

    def replay() -> None:
        ctx = keyed(base, header=replayed_key)
        dispatch.call_tool(ctx, "create_journal_entry", ENTRY)
        assert ctx.idempotency is not None and ctx.idempotency.replayed

    def read() -> None:
        dispatch.call_tool(base, "get_account_balance", {"accountCode": "100"})

    print(f"[{args.database}] {args.calls} calls of each, alternating", flush=True)
    keyed_times, unkeyed_times = alternate(keyed_write, unkeyed, args.calls)
    ratio = report("keyed create_journal_entry", keyed_times, unkeyed_times, "unkeyed")
    print(f"  keyed throughput ÷ unkeyed: {1 / ratio:.2f} (goal ≥ 0.85 on PostgreSQL)", flush=True)
    replay_times, read_times = alternate(replay, read, args.calls)
    ratio = report("replay of create_journal_entry", replay_times, read_times, "get_account_balance")
    print(f"  replay ÷ exact-lookup read: {ratio:.2f} (goal ≤ 2)", flush=True)


if __name__ == "__main__":
    main()
