"""When the database or Redis goes away under a long-running process: which errors say so, and how the process
waits for it to come back (one log line per outage, not one per attempt; backoff between attempts).

`DEPENDENCY_ERRORS` are the exceptions that mean "a dependency is unavailable", not "this request is wrong": the
database refusing or dropping a connection, or the pool timing out (Django re-raises psycopg's errors and
psycopg_pool's `PoolTimeout` as `django.db.OperationalError`/`InterfaceError`), and Redis unreachable (redis-py's
connection and timeout errors; django-redis's cache raises `ConnectionInterrupted` for them).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.db import InterfaceError, OperationalError, close_old_connections, connections
from django_redis.exceptions import ConnectionInterrupted
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

DEPENDENCY_ERRORS: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    ConnectionInterrupted,
    RedisConnectionError,
    RedisTimeoutError,
)

# Waits between attempts while a dependency is down: doubling from FIRST_WAIT up to MAX_WAIT seconds.
FIRST_WAIT = 0.5
MAX_WAIT = 30.0


def drop_connections() -> None:
    """Forget this thread's database connections, so the next query opens a fresh one (a pooled connection goes
    back to the pool, which checks it before lending it again)."""
    for connection in connections.all(initialized_only=True):
        try:
            connection.close()
        except DEPENDENCY_ERRORS:
            pass  # already dead; closing it is all that was asked


class Outage:
    """Tracks one process's outages: `down(exc)` logs the first failure of an outage and returns how long to wait
    before the next attempt; `up()` logs the end of one (if any)."""

    def __init__(self, logger: logging.Logger, what: str, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.logger = logger
        self.what = what
        self.sleep = sleep
        self.since: float | None = None
        self.wait = FIRST_WAIT

    def down(self, exc: BaseException) -> float:
        if self.since is None:
            self.since = time.monotonic()
            self.wait = FIRST_WAIT
            self.logger.error(
                "%s: a dependency is unavailable (%s: %s); retrying with backoff until it returns",
                self.what,
                type(exc).__name__,
                str(exc).strip().splitlines()[0] if str(exc).strip() else "",
            )
        wait = self.wait
        self.wait = min(self.wait * 2, MAX_WAIT)
        return wait

    def up(self) -> None:
        if self.since is not None:
            self.logger.warning(
                "%s: dependencies are back after %.1f s; resuming", self.what, time.monotonic() - self.since
            )
            self.since = None

    def pause(self, exc: BaseException) -> None:
        """Record a failure, drop the dead connections and wait before the next attempt."""
        wait = self.down(exc)
        drop_connections()
        self.sleep(wait)
        close_old_connections()
