"""Benchmark: merchant's embedded product search on N products (default 100,000) in SQLite.

Prints p50/p95 of `search_products`' database search for Japanese queries, side by side with two
baselines measured in the same process: an indexed exact lookup (by SKU, the floor) and a naive
`LIKE '%…%'` scan over the raw names (what the search would cost without normalised keys and the
trigram index — and it would not even find ﾑｷﾞﾎﾞｰ).

    .venv/bin/python bench/bench_merchant.py [--scale 100000] [--rounds 30]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, percentile, timings  # noqa: E402

QUERIES = [
    ["むぎぼー"],
    ["ﾑｷﾞﾎﾞｰ"],
    ["カレンダ"],
    ["かわいい", "グッズ"],
    ["マグカップ", "抹茶"],
    ["北欧風", "クッション"],
    ["抹茶"],  # 2 characters: below the trigram minimum, a scan (stops early: common)
    ["方眼"],  # 2 characters and rare: the worst case, a full scan
    ["存在しない商品"],  # no hits: the fallback listing
]


def measure(fn, rounds: int) -> list[float]:
    """Milliseconds of `rounds` calls, after one warm-up call."""
    return [seconds * 1000 for seconds in timings(fn, repeat=rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    os.environ.pop("MEILISEARCH_URL", None)  # the embedded database search is what is measured
    var_dir = boot("merchant")
    from django.core.management import call_command

    from merchant.models import Product
    from merchant.search import DatabaseSearch
    from merchant.selectors import product_search

    print(f"SQLite in {var_dir}; seeding {args.scale:,} products …", flush=True)
    started = time.perf_counter()
    call_command("seed_merchant", "--scale", str(args.scale), verbosity=1)
    print(f"seeded in {time.perf_counter() - started:.1f} s", flush=True)

    skus = [f"GEN-{i:06d}" for i in range(1, args.scale + 1, max(1, args.scale // 50))]
    sku_iter = iter(skus * (args.rounds * 2))
    exact = measure(lambda: Product.objects.filter(sku=next(sku_iter)).first(), args.rounds * len(QUERIES))
    exact_p50, exact_p95 = percentile(exact, 50), percentile(exact, 95)
    print(f"\nbaseline: indexed exact lookup by SKU  p50 {exact_p50:.2f} ms  p95 {exact_p95:.2f} ms\n")

    header = (
        f"{'query':<22}{'hits':>5}{'p50 ms':>8}{'p95 ms':>8}{'p50/exact':>10}{'p95/exact':>10}"
        f"{'naive hits':>11}{'naive p95':>10}"
    )
    print(header)
    print("-" * len(header))
    all_ours = []
    for keywords in QUERIES:
        result = product_search(keywords=keywords, limit=20)
        ours = measure(lambda k=keywords: product_search(keywords=k, limit=20), args.rounds)
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
            f"{percentile(ours, 50) / exact_p50:>9.0f}x{percentile(ours, 95) / exact_p95:>9.0f}x"
            f"{len(naive()):>11}{percentile(naive_times, 95):>10.1f}",
            flush=True,
        )
    overall = percentile(all_ours, 95)
    print(
        f"\nall queries: search p95 {overall:.1f} ms = {overall / exact_p95:.0f}x the indexed exact lookup "
        f"(candidate cap {DatabaseSearch().candidate_cap(20)}, rapidfuzz re-ranking included)"
    )


if __name__ == "__main__":
    main()
