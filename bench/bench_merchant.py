"""Benchmark: merchant's embedded product search on N products (default 100,000), SQLite and PostgreSQL.

One child process per database (Django binds one per process); PostgreSQL is a fresh database on the
throwaway cluster of `scripts/testpg` ($TESTPG_PORT).

Prints p50/p95 of `search_products`' database search for Japanese queries, side by side with two
baselines measured in the same process: an indexed exact lookup (by SKU, the floor) and a naive
`LIKE '%…%'` scan over the raw names (what the search would cost without normalised keys and the
trigram index — and it would not even find ﾑｷﾞﾎﾞｰ).

    .venv/bin/python bench/bench_merchant.py [--scale 100000] [--rounds 15] [--database sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, parse_per_database, percentile, timings  # noqa: E402

QUERIES = [
    ["むぎぼー"],
    ["ﾑｷﾞﾎﾞｰ"],
    ["カレンダ"],
    ["かわいい", "グッズ"],
    ["マグカップ", "抹茶"],
    ["北欧風", "クッション"],
    ["抹茶"],  # 2 characters: below the trigram minimum, the gram index (common)
    ["方眼"],  # 2 characters and rare: a full scan without the gram index
    ["桜"],  # 1 character
    ["存在しない商品"],  # no hits: the fallback listing
]


def measure(fn, rounds: int) -> list[float]:
    """Milliseconds of `rounds` calls, after one warm-up call."""
    return [seconds * 1000 for seconds in timings(fn, repeat=rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parse_per_database(parser, __file__)
    if args is None:
        return

    os.environ.pop("MEILISEARCH_URL", None)  # the embedded database search is what is measured
    boot("merchant", postgres=args.database == "postgres")
    from django.core.management import call_command
    from django.db import connection

    from merchant.models import Product
    from merchant.search import DatabaseSearch
    from merchant.selectors import product_search

    print(f"seeding {args.scale:,} products …", flush=True)
    started = time.perf_counter()
    call_command("seed_merchant", "--scale", str(args.scale), verbosity=1)
    print(f"seeded in {time.perf_counter() - started:.1f} s", flush=True)

    skus = [f"GEN-{i:06d}" for i in range(1, args.scale + 1, max(1, args.scale // 50))]
    sku_iter = iter(skus * (args.rounds * len(QUERIES) * 2 + 2))

    def exact_lookup():
        return Product.objects.filter(sku=next(sku_iter)).first()

    # Each query's rounds alternate with the baseline's (these machines are noisy): exact, search, exact, …
    samples: dict[tuple[str, ...], list[float]] = {tuple(k): [] for k in QUERIES}
    exact: list[float] = []
    for keywords in QUERIES:
        product_search(keywords=keywords, limit=20)  # warm up
        for _ in range(args.rounds):
            exact.extend(measure(exact_lookup, 1))
            samples[tuple(keywords)].extend(measure(lambda k=keywords: product_search(keywords=k, limit=20), 1))
    exact_p50, exact_p95 = percentile(exact, 50), percentile(exact, 95)
    print(f"\n{connection.vendor}: baseline indexed exact lookup by SKU", end="")
    print(f"  p50 {exact_p50:.2f} ms  p95 {exact_p95:.2f} ms\n")

    header = (
        f"{'query':<22}{'hits':>5}{'p50 ms':>8}{'p95 ms':>8}{'p50/exact':>10}{'p95/exact':>10}"
        f"{'naive hits':>11}{'naive p95':>10}"
    )
    print(header)
    print("-" * len(header))
    all_ours = []
    for keywords in QUERIES:
        result = product_search(keywords=keywords, limit=20)
        ours = samples[tuple(keywords)]
        all_ours.extend(ours)

        def naive(w=keywords[0]):
            return list(
                Product.objects.filter(name__contains=w, inventory_count__gt=0, active=True)
                .order_by("id")
                .values_list("id", flat=True)[:20]
            )

        naive_times = measure(naive, 5)
        label = " ".join(keywords) + ("" if not result.fallback else f" ({','.join(result.fallback)})")
        print(
            f"{label:<22}{len(result.products):>5}{percentile(ours, 50):>8.1f}{percentile(ours, 95):>8.1f}"
            f"{percentile(ours, 50) / exact_p50:>9.1f}x{percentile(ours, 95) / exact_p95:>9.1f}x"
            f"{len(naive()):>11}{percentile(naive_times, 95):>10.1f}",
            flush=True,
        )
    overall = percentile(all_ours, 95)
    print(
        f"\nall queries: search p95 {overall:.1f} ms = {overall / exact_p95:.1f}x the indexed exact lookup "
        f"(candidate cap {DatabaseSearch().candidate_cap(20)}, rapidfuzz re-ranking included)"
    )


if __name__ == "__main__":
    main()
