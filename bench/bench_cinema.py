"""Cinema benchmark: seat maps of 500-seat shows and the film list over 1,000 films.

Standalone: makes a temporary MCPSITE_VAR_DIR, migrates a fresh SQLite database, runs
`seed_cinema --scale N` (N×100 films, one 500-seat show each) and times the real tools through the
dispatcher against a naive baseline (one query per seat / per film) run side by side in the same
process. Prints queries per call and time ratios (these machines are noisy; ratios are what count).

    .venv/bin/python bench/bench_cinema.py [--scale 10] [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, timings  # noqa: E402

boot("cinema")

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from cinema.models import Movie, ReservedSeat, Schedule, Seat  # noqa: E402
from cinema.search import match_score, normalize  # noqa: E402
from mcpsite.mcp import dispatch  # noqa: E402
from mcpsite.mcp.registry import CallContext  # noqa: E402

CTX = CallContext(transport="bench", request_id="bench")


def naive_seat_availability(schedule_id: str) -> dict:
    """The obvious ORM code: one query per seat (the N+1 the selector avoids)."""
    schedule = Schedule.objects.get(public_id=schedule_id)
    seats = []
    for seat in Seat.objects.filter(theater=schedule.theater).order_by("row", "column"):
        taken = ReservedSeat.objects.filter(schedule=schedule, seat=seat, active=True).exists()
        status = "reserved" if taken else "blocked" if seat.blocked else "available"
        seats.append({"seat_id": seat.label, "row": seat.row, "column": seat.column, "status": status})
    return {"schedule_id": schedule_id, "seats": seats}


def naive_movie_list(day, query: str | None) -> dict:
    """One query per film for its shows and its bookings."""
    movies = []
    key = normalize(query) if query else ""
    for movie in Movie.objects.all():
        if not movie.schedules.filter(date=day).exists():
            continue
        if match_score(key, movie.title_key) <= 0:
            continue
        booked = ReservedSeat.objects.filter(schedule__movie=movie, schedule__date=day, active=True).count()
        movies.append({"movie_id": movie.public_id, "title": movie.title, "booked": booked})
    return {"movies": movies[:100]}


def measure(fn, repeat: int) -> tuple[float, int]:
    fn()  # warm up
    with CaptureQueriesContext(connection) as captured:
        fn()
    return statistics.median(timings(fn, repeat=repeat, warmup=0)), len(captured)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=10, help="N×100 films (default 10: 1,000 films)")
    parser.add_argument("--repeat", type=int, default=15)
    options = parser.parse_args()

    started = time.perf_counter()
    call_command("seed_cinema", scale=options.scale, days=1)
    print(f"seeded in {time.perf_counter() - started:.1f}s", flush=True)

    big = Schedule.objects.filter(theater__rows=20, theater__columns=25).order_by("pk").first()
    day = big.date
    films_that_day = Schedule.objects.filter(date=day).values("movie").distinct().count()
    print(f"show {big.public_id}: {big.theater.seats.count()} seats; {films_that_day} films on {day}\n", flush=True)

    cases = [
        (
            "get_seat_availability (500 seats)",
            lambda: dispatch.call_tool(CTX, "get_seat_availability", {"schedule_id": big.public_id}),
            lambda: naive_seat_availability(big.public_id),
        ),
        (
            f"get_movie_list ({films_that_day} films, no query)",
            lambda: dispatch.call_tool(CTX, "get_movie_list", {"date": day.isoformat(), "limit": 100}),
            lambda: naive_movie_list(day, None),
        ),
        (
            f"get_movie_list ({films_that_day} films, fuzzy query)",
            lambda: dispatch.call_tool(CTX, "get_movie_list", {"date": day.isoformat(), "query": "べんちえいが0500"}),
            lambda: naive_movie_list(day, "べんちえいが0500"),
        ),
    ]
    print(f"{'case':45} {'tool ms':>9} {'queries':>8} {'naive ms':>9} {'queries':>8} {'speed-up':>9}")
    for name, tool_fn, naive_fn in cases:
        tool_time, tool_queries = measure(tool_fn, options.repeat)
        naive_time, naive_queries = measure(naive_fn, max(3, options.repeat // 5))
        print(
            f"{name:45} {tool_time * 1000:9.1f} {tool_queries:8d} {naive_time * 1000:9.1f} {naive_queries:8d}"
            f" {naive_time / tool_time:8.1f}x",
            flush=True,
        )
    # Query counts do not grow with the catalogue: the same call on the seed's 2-film day.
    _t, small_queries = measure(lambda: dispatch.call_tool(CTX, "get_movie_list", {"date": "2026-02-20"}), 1)
    print(f"\nget_movie_list queries on a 2-film day: {small_queries} (constant: the audit insert included)")


if __name__ == "__main__":
    main()
