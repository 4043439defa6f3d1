"""The GaluchatAPI client: one POST of integer points to /raacs, /resareas or /rjccs.

- `?mapset=` goes in the query string, never in the body (seed 2 and 4.2).
- At most `requests_per_second` calls start in any one-second window, across every thread of the
  process (the published limit is 10/s).
- Only connection failures are retried (nothing was sent, so a retry is safe); read timeouts and
  HTTP statuses, 429 above all, are never retried blindly.
- HTTP faults become the seed's errors here; a malformed body is reported to the caller as
  `MalformedResponse`, because only the caller knows which input point it concerns.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, NamedTuple

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from mcpsite.core import metrics

from .conf import ENDPOINTS, GaluchatConfig
from .errors import ApiError, UpstreamRateLimited

BODY_EXCERPT_CHARS = 200
CONNECT_RETRIES = 2
POOL_SIZE = 8


class MalformedResponse(Exception):
    """A 2xx answer whose body is not JSON (or nested too deeply to decode); `status` is its HTTP status."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class Answer(NamedTuple):
    """A 2xx answer: its HTTP status (logged with a failure the body causes later) and its parsed JSON body."""

    status: int
    payload: Any


class QueueFull(Exception):
    """Too many callers already wait for a start (the upstream is slow or dead)."""


class RateLimiter:
    """At most `rate` starts in any sliding one-second window (plus a margin), shared by all threads.

    The margin absorbs scheduling and network jitter between our start and the upstream's arrival
    count, so a burst that starts exactly one second after the previous one is not counted with it.
    A caller that would queue behind `MAX_QUEUE_SECONDS` of starts fails at once (QueueFull): each
    waiter holds a worker thread, and behind a dead upstream the queue only grows.
    """

    MARGIN_S = 0.1
    MAX_QUEUE_SECONDS = 5

    def __init__(self, clock=time.monotonic, sleep=time.sleep):
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._starts: deque[float] = deque()
        self._waiting = 0

    def acquire(self, rate: float) -> float:
        """Block until a start is allowed; return the start time it was granted (on the limiter's clock)."""
        capacity, window = (int(rate), 1.0 + self.MARGIN_S) if rate >= 1 else (1, 1.0 / rate + self.MARGIN_S)
        max_waiting = max(1, int(capacity * self.MAX_QUEUE_SECONDS / window))
        queued = False
        try:
            while True:
                with self._lock:
                    now = self._clock()
                    while self._starts and self._starts[0] + window <= now:
                        self._starts.popleft()
                    if len(self._starts) < capacity:
                        self._starts.append(now)
                        return now
                    if not queued:
                        if self._waiting >= max_waiting:
                            raise QueueFull()
                        self._waiting, queued = self._waiting + 1, True
                    # At least a millisecond, so float rounding can never make this loop spin.
                    wait = max(self._starts[0] + window - now, 0.001)
                self._sleep(wait)
        finally:
            if queued:
                with self._lock:
                    self._waiting -= 1

    def reset(self) -> None:
        with self._lock:
            self._starts.clear()


rate_limiter = RateLimiter()

_session: requests.Session | None = None
_session_lock = threading.Lock()


def session() -> requests.Session:
    """The process-wide session (connection pooling across calls and threads)."""
    global _session
    with _session_lock:
        if _session is None:
            retry = Retry(
                total=CONNECT_RETRIES,
                connect=CONNECT_RETRIES,
                read=0,
                status=0,
                other=0,
                redirect=0,
                backoff_factor=0.1,
                raise_on_status=False,
                respect_retry_after_header=False,
            )
            adapter = HTTPAdapter(max_retries=retry, pool_connections=2, pool_maxsize=POOL_SIZE)
            new = requests.Session()
            new.mount("https://", adapter)
            new.mount("http://", adapter)
            _session = new
        return _session


def excerpt(text: str) -> str:
    """The body as one short printable line (upstream error bodies are undocumented)."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text[: BODY_EXCERPT_CHARS * 4]).split())
    return flat if len(flat) <= BODY_EXCERPT_CHARS else flat[:BODY_EXCERPT_CHARS] + "…"


def lookup(config: GaluchatConfig, granularity: str, points: list[list[int]], *, location: str | None = None) -> Answer:
    """POST `points` ([lon_int, lat_int] pairs) and return the status and the parsed JSON body.

    Raises UpstreamRateLimited (429), ApiError (other statuses, timeouts, connection failures) or
    MalformedResponse (a 2xx body that is not JSON).
    """
    path = ENDPOINTS[granularity]
    body: dict[str, Any] = {"unit": float(config.unit), "points": points}
    try:
        rate_limiter.acquire(config.requests_per_second)
    except QueueFull:
        raise UpstreamRateLimited(
            f"Too many GaluchatAPI requests are waiting for POST {path}; retry shortly", location
        ) from None
    started, outcome = time.perf_counter(), "error"
    try:
        response = session().post(
            config.endpoint_url(granularity),
            params={"mapset": config.mapsets[granularity]},
            json=body,
            timeout=config.timeout_s,
            allow_redirects=False,
            headers={"Accept": "application/json"},
        )
        outcome = str(response.status_code)
    except requests.Timeout:
        outcome = "timeout"
        raise ApiError(f"GaluchatAPI POST {path} timed out after {int(config.timeout_s * 1000)} ms", location) from None
    except requests.ConnectionError:
        raise ApiError(f"Could not connect to GaluchatAPI for POST {path}", location) from None
    except (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError):
        raise ApiError(f"GaluchatAPI POST {path} sent a broken response", location) from None
    finally:
        metrics.upstream_call(service="galuchat", status=outcome, seconds=time.perf_counter() - started)
    status = response.status_code
    if status == 429:
        retry_after = response.headers.get("Retry-After")
        hint = f" (Retry-After: {excerpt(retry_after)})" if retry_after else ""
        raise UpstreamRateLimited(
            f"GaluchatAPI rate limit exceeded (HTTP 429) on POST {path}{hint}", location, upstream_status=status
        )
    if not 200 <= status < 300:
        body_text = excerpt(response.text) or "(empty body)"
        raise ApiError(f"GaluchatAPI POST {path} answered HTTP {status}: {body_text}", location, upstream_status=status)
    try:
        return Answer(status, response.json())
    except (ValueError, RecursionError):  # deep nesting makes the decoder raise RecursionError
        body_text = excerpt(response.text) or "(empty body)"
        raise MalformedResponse(
            f"GaluchatAPI POST {path} answered HTTP {status} with a body that is not JSON: {body_text}", status
        ) from None
