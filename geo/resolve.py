"""Service: resolving points through GaluchatAPI over HTTP (seed section 5), so not a selector. Writes nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import galuchat, pointcache
from .conf import GaluchatConfig, galuchat_config
from .errors import OutOfCoverage, ResolveCancelled, point_location
from .merge import CoverageProblem, Resolved, merge
from .points import Points, parse_points

# Upstream calls in flight at once for one resolve; the rate limiter still caps starts per second.
UPSTREAM_CONCURRENCY = 4

# progress(requests answered, requests in all): called after each GaluchatAPI request, from any thread.
Progress = Callable[[int, int], None]


def points_resolve(
    *,
    granularity: str,
    points: list[Any],
    config: GaluchatConfig | None = None,
    on_progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[dict[str, Any]]:
    """`[{ref?, code, address}]` for `points`, in input order and count (seed 3.2).

    Every point is validated before anything is sent. Identical integer points are sent once,
    cached ones not at all, and the rest in requests of at most `max_points_per_request`.
    Raises the seed's errors (InvalidInput, UpstreamRateLimited, ApiError, OutOfCoverage).

    `on_progress` hears of each answered GaluchatAPI request; once `should_stop()` is true no further request is
    sent and ResolveCancelled is raised.
    """
    config = config or galuchat_config()
    parsed = parse_points(points, unit=config.unit, max_points=config.max_points)
    resolved = _resolve_unique(config, granularity, parsed, on_progress, should_stop)
    # One dict display per point (the hot loop at 10,000 points): each point's answer looked up in C, the columns
    # zipped, no attribute lookups, no item assignments.
    answers = map(resolved.__getitem__, parsed.keys)
    return [
        {"ref": ref, "code": code, "address": address} if has_ref else {"code": code, "address": address}
        for (code, address), has_ref, ref in zip(answers, parsed.has_refs, parsed.refs, strict=True)
    ]


def _resolve_unique(
    config: GaluchatConfig,
    granularity: str,
    parsed: Points,
    on_progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict:
    """Each distinct integer point's answer: from the cache, else from GaluchatAPI (then cached)."""
    distinct = dict.fromkeys(parsed.keys)  # in first-seen order
    mapset = config.mapsets[granularity]
    cache_keys = pointcache.cache_keys(granularity, mapset, config.unit, distinct) if config.cache_ttl else {}
    resolved = _cached(cache_keys) if config.cache_ttl else {}
    missing = [point for point in distinct if point not in resolved]
    if missing:
        first_index: dict[tuple[int, int], int] = {}

        def describe(point: tuple[int, int]) -> str:
            """Where `point` first appears in the input (an error's location)."""
            if not first_index:  # built on first use, in C: the last write of a key is its first place
                first_index.update(zip(reversed(parsed.keys), range(len(parsed.keys) - 1, -1, -1), strict=True))
            index = first_index[point]
            return point_location(index, parsed.refs[index], has_ref=parsed.has_refs[index])

        fresh = _fetch(config, granularity, missing, describe, on_progress=on_progress, should_stop=should_stop)
        resolved.update(fresh)
        if config.cache_ttl:
            pointcache.set_many({cache_keys[p]: value for p, value in fresh.items()}, config.cache_ttl)
    return resolved


def _cached(cache_keys: dict[tuple[int, int], str]) -> dict[tuple[int, int], Resolved]:
    cached = pointcache.get_many(list(cache_keys.values()))
    if len(cached) == len(cache_keys):  # every point cached (a warm call): paired up in C
        return dict(zip(cache_keys, map(cached.__getitem__, cache_keys.values()), strict=True))
    found: dict[tuple[int, int], Resolved] = {}
    for point, key in cache_keys.items():
        hit = cached.get(key)
        if hit is not None:
            found[point] = hit
    return found


def _fetch(
    config: GaluchatConfig,
    granularity: str,
    missing: list[tuple[int, int]],
    describe: Callable[[tuple[int, int]], str],
    *,
    on_progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[tuple[int, int], Resolved]:
    """The answers for `missing`, asked in requests of at most `max_points_per_request`, up to
    UPSTREAM_CONCURRENCY in flight; the first failing request in input order decides the error."""
    size = config.max_points_per_request
    chunks = [missing[start : start + size] for start in range(0, len(missing), size)]

    answered = 0
    answered_lock = threading.Lock()

    def fetch(chunk: list[tuple[int, int]]) -> list[Resolved]:
        nonlocal answered
        if should_stop is not None and should_stop():
            raise ResolveCancelled("Cancelled by the caller; no further GaluchatAPI request was sent")
        status = None  # the HTTP status of a 2xx answer that is unusable: logged with the error
        try:
            reply = galuchat.lookup(config, granularity, [list(p) for p in chunk], location=describe(chunk[0]))
            status = reply.status
            answer = merge(reply.payload, granularity, len(chunk))
        except (galuchat.MalformedResponse, CoverageProblem) as exc:
            position = getattr(exc, "position", None)
            point = chunk[position] if position is not None and position < len(chunk) else chunk[0]
            scope = "" if position is not None else f" (the request of {len(chunk)} points starting here)"
            raise OutOfCoverage(
                f"GaluchatAPI answer does not match the request: {exc}{scope}",
                describe(point),
                upstream_status=getattr(exc, "status", status),
            ) from None
        if on_progress is not None:
            with answered_lock:  # held while reporting, so the counts go out in order
                answered += 1
                on_progress(answered, len(chunks))
        return answer

    workers = min(UPSTREAM_CONCURRENCY, len(chunks))
    if workers == 1:
        answers = [fetch(chunks[0])]
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="galuchat") as pool:
            futures = [pool.submit(fetch, chunk) for chunk in chunks]
            try:
                answers = [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    fresh: dict[tuple[int, int], Resolved] = {}
    for chunk, answer in zip(chunks, answers, strict=True):
        fresh.update(zip(chunk, answer, strict=True))
    return fresh
