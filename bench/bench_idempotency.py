"""Benchmark: the cost of idempotency keys (docs/idempotency.md), through the real dispatcher (scope, rate limit,
schema validation, the idempotency stage, the tool, audit) as an API key calls it.

1. A keyed `create_journal_entry` (a new key each call: the claim, the write and the stored outcome in one
   transaction) against an unkeyed one; goal: keyed throughput ≥ 0.85 × unkeyed on PostgreSQL.
2. A replay (the same key and arguments again: the stored outcome read back) against an exact-lookup read of the
   same size, `get_account_balance` of one account; goal: a replay ≤ 2 × the read.

The two sides of each pair alternate call by call, so noise hits both alike. Besides the wall-clock medians it
prints the CPU time of each call (this thread's, plus on PostgreSQL its server process's, from Linux's
/proc/PID/schedstat): on a loaded machine the wall-clock ratio swings from run to run, the CPU ratio much less. One
child process per database; PostgreSQL is a fresh database on `scripts/testpg`'s cluster ($TESTPG_PORT).

    .venv/bin/python bench/bench_idempotency.py [--calls 300] [--database sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, parse_per_database, report  # noqa: E402

ENTRY = {
    "date": "2026-11-28",
    "description": "商品仕入",
    "lines": [{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 10000}],
}


def alternate(
    first, second, calls: int, cpu: Callable[[], float]
) -> tuple[list[float], list[float], list[float], list[float]]:
    """Time `first()` and `second()` in turn, `calls` times each (after a few warm-up calls of each): wall-clock
    seconds and CPU seconds (`cpu()`) of each call."""
    for _ in range(5):
        first(), second()
    a, b, a_cpu, b_cpu = [], [], [], []
    for _ in range(calls):
        for fn, samples, cpu_samples in ((first, a, a_cpu), (second, b, b_cpu)):
            start, start_cpu = time.perf_counter(), cpu()
            fn()
            samples.append(time.perf_counter() - start)
            cpu_samples.append(cpu() - start_cpu)
    return a, b, a_cpu, b_cpu


def cpu_clock() -> Callable[[], float]:
    """CPU seconds used so far by this thread and, on PostgreSQL, by the server process of its connection."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return time.thread_time
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        schedstat = Path(f"/proc/{cursor.fetchone()[0]}/schedstat")
    return lambda: time.thread_time() + int(schedstat.read_text().split()[0]) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    args = parse_per_database(parser, __file__)
    if args is None:
        return
    boot("idempotency", postgres=args.database == "postgres")

    from django.contrib.auth import get_user_model
    from django.db import connection

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

    cpu = cpu_clock()
    where = "CPU, client + server" if connection.vendor == "postgresql" else "CPU"
    print(f"[{args.database}] {args.calls} calls of each, alternating", flush=True)
    keyed_times, unkeyed_times, keyed_cpu, unkeyed_cpu = alternate(keyed_write, unkeyed, args.calls, cpu)
    ratio = report("keyed create_journal_entry", keyed_times, unkeyed_times, "unkeyed")
    print(f"  keyed throughput ÷ unkeyed: {1 / ratio:.2f} (goal ≥ 0.85 on PostgreSQL)", flush=True)
    cpu_ratio = report(f"  {where}", keyed_cpu, unkeyed_cpu, "unkeyed")
    print(f"  keyed throughput ÷ unkeyed by CPU time: {1 / cpu_ratio:.2f}", flush=True)
    replay_times, read_times, replay_cpu, read_cpu = alternate(replay, read, args.calls, cpu)
    ratio = report("replay of create_journal_entry", replay_times, read_times, "get_account_balance")
    print(f"  replay ÷ exact-lookup read: {ratio:.2f} (goal ≤ 2)", flush=True)
    report(f"  {where}", replay_cpu, read_cpu, "get_account_balance")


if __name__ == "__main__":
    main()
