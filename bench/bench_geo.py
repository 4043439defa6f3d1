"""Geo benchmark: our own processing of 10,000 points against json.loads + json.dumps of them.

Standalone: makes a temporary MCPSITE_VAR_DIR, migrates a fresh SQLite database, runs `seed_geo`, sets the process
up as the server does (`mcpsite.asgi`), then times `resolve_points` on 10,000 points (2,500 distinct, with refs)
through the real dispatcher with GaluchatAPI answered in-process (precomputed answers, so only our code is timed:
validation, decimal rounding, de-duplication, chunking, cache, merge, result shaping, the audit row). The
baseline, run side by side, is `json.loads` + `json.dumps` of the same request and result payloads:
the least any JSON tool must do with them. A third line times the full HTTP client path against a
`responses` fake (requests + urllib3 + JSON bodies) for information.

    .venv/bin/python bench/bench_geo.py [--points 10000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot  # noqa: E402

os.environ["GALUCHAT_BASE_URL"] = "https://galuchat.bench.invalid"  # answered in-process, never contacted
os.environ["GALUCHAT_REQUESTS_PER_SECOND"] = "100000"  # the limiter is not what is measured
with contextlib.redirect_stdout(sys.stderr):  # progress on stderr, stdout holds only the results
    boot("geo")
import responses  # noqa: E402
from django.core.management import call_command  # noqa: E402
from tqdm import tqdm  # noqa: E402

import mcpsite.asgi  # noqa: E402,F401  (the process set up as the server's: its startup objects frozen out of the GC)
from geo import galuchat, pointcache  # noqa: E402
from mcpsite.mcp import dispatch  # noqa: E402
from mcpsite.mcp.registry import CallContext  # noqa: E402

CTX = CallContext(transport="bench", request_id="bench")


def make_points(n: int) -> list[dict]:
    distinct = max(1, n // 4)
    base = [(round(129.5 + (i * 0.0137) % 16, 5), round(31.0 + (i * 0.0091) % 14, 5)) for i in range(distinct)]
    return [
        {"ref": f"r{i}", "lat": base[(i * 7919) % distinct][1], "lon": base[(i * 7919) % distinct][0]} for i in range(n)
    ]


def answer(granularity: str, points: list[list[int]]) -> dict:
    codes = [13000 + (abs(lon) * 7 + abs(lat)) % 997 for lon, lat in points]
    addresses = {str(c): {"prefecture": "東京都", "city": f"区{c}"} for c in codes}
    return {"addresses": addresses, "aacodes": codes}


def timed(fn, repeat: int, label: str) -> float:
    samples = []
    for _ in tqdm(range(repeat), desc=label, leave=False, file=sys.stderr):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()

    call_command("seed_geo", stdout=open(os.devnull, "w"))  # noqa: SIM115

    points = make_points(args.points)
    request_text = json.dumps({"granularity": "admin", "points": points}, ensure_ascii=False)

    # Precomputed upstream answers keyed by the request's points: only our code is timed.
    answers: dict[str, dict] = {}
    real_lookup = galuchat.lookup

    def in_process_lookup(config, granularity, pts, *, location=None):
        key = json.dumps(pts)
        if key not in answers:
            answers[key] = answer(granularity, pts)
        return galuchat.Answer(200, answers[key])

    def call_tool():
        pointcache.clear()
        result = dispatch.call_tool(CTX, "resolve_points", json.loads(request_text)).data
        assert len(result["results"]) == args.points, result.get("error")
        return result

    galuchat.lookup = in_process_lookup
    result = call_tool()  # warm up, and fill `answers`
    result_text = json.dumps(result, ensure_ascii=False)

    def baseline():
        json.dumps(json.loads(request_text), ensure_ascii=False)
        json.dumps(json.loads(result_text), ensure_ascii=False)

    def warm_cache():
        dispatch.call_tool(CTX, "resolve_points", json.loads(request_text))

    # Interleaved rounds (baseline, cold, warm), so a noisy neighbour slows all three alike; medians reported.
    t_base, t_ours, t_warm = [], [], []
    call_tool()
    for _ in tqdm(range(args.repeat), desc="rounds (baseline, cold, warm)", leave=False, file=sys.stderr):
        for samples, fn in ((t_base, baseline), (t_ours, call_tool), (t_warm, warm_cache)):
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
    t_base, t_ours, t_warm = (statistics.median(s) for s in (t_base, t_ours, t_warm))

    galuchat.lookup = real_lookup
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        for path in ("/raacs", "/resareas", "/rjccs"):
            mock.add_callback(
                responses.POST,
                os.environ["GALUCHAT_BASE_URL"] + path,
                callback=lambda req: (200, {}, json.dumps(answer("admin", json.loads(req.body)["points"]))),
            )
        t_http = timed(call_tool, max(3, args.repeat // 2), "resolve via HTTP client")

    distinct = len({(p["lon"], p["lat"]) for p in points})
    print(f"geo resolve_points: {args.points} points ({distinct} distinct), median of {args.repeat} interleaved rounds")
    print(f"  baseline json.loads+json.dumps (request+result): {t_base * 1000:8.1f} ms   1.00x")
    print(f"  ours, cold cache (3 upstream answers merged):    {t_ours * 1000:8.1f} ms   {t_ours / t_base:5.2f}x")
    print(f"  ours, warm cache (no upstream call):             {t_warm * 1000:8.1f} ms   {t_warm / t_base:5.2f}x")
    print(f"  ours + requests/urllib3 client (responses fake): {t_http * 1000:8.1f} ms   {t_http / t_base:5.2f}x")


if __name__ == "__main__":
    main()
