"""Rate-limit benchmark: the cost of counting one call against an API key's rate, per store.

Times `over_limit` (what every tool call and every counted /mcp request pays) for a key whose rate it never
reaches, against a call that does nothing, on the store each deployment uses: the database (SQLite, PostgreSQL)
or Redis (`--store redis`, a private redis-server on loopback).

    .venv/bin/python bench/bench_limits.py [--repeat 3000] [--database sqlite|postgres|both] [--store database|redis]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, parse_per_database, report, start_redis, timings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3000)
    parser.add_argument("--store", choices=["database", "redis"], default="database")
    args = parse_per_database(parser, __file__)
    if args is None:
        return
    cleanups: list = []
    try:
        if args.store == "redis":
            os.environ["REDIS_URL"] = start_redis(cleanups)
        boot("limits", postgres=args.database == "postgres")
        from mcpsite.core.limits import over_limit

        def counted() -> None:
            assert not over_limit(group="bench", key="k1", rate="1000000/m")

        print(f"timing {args.repeat} calls each ({args.database}, {args.store})…", flush=True)
        nothing = timings(lambda: None, repeat=args.repeat)
        ours = timings(counted, repeat=args.repeat, warmup=20)
        report("over_limit (one counted call)", ours, nothing, "no-op")
    finally:
        for cleanup in reversed(cleanups):
            cleanup()


if __name__ == "__main__":
    main()
