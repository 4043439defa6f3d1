"""A dependency that does not answer (the database, the shared cache): the request is refused with 503 and a
`Retry-After` in its door's shape, never a 500 or an internal error, and the process logs one line per outage, not a
traceback per request."""

from __future__ import annotations

import logging
import threading
import time

from django.db import DatabaseError

from mcpsite.core.errors import ServiceUnavailable
from mcpsite.core.outage import DEPENDENCY_ERRORS

logger = logging.getLogger("mcpsite.mcp")

# Seconds a refused client is told to wait, and the quiet time after which a failure counts as a new outage.
RETRY_AFTER = 5
OUTAGE_GAP = 60.0

_last_logged: dict[str, float] = {}
_lock = threading.Lock()


def dependency_of(exc: BaseException) -> str | None:
    """The dependency `exc` says is not answering ("database", "cache"), or None for any other failure
    (mcpsite.core.outage.DEPENDENCY_ERRORS: a constraint, bad data or a bug is never an outage)."""
    if not isinstance(exc, DEPENDENCY_ERRORS):
        return None
    return "database" if isinstance(exc, DatabaseError) else "cache"


def unavailable(exc: BaseException) -> ServiceUnavailable | None:
    """The refusal of a request that `exc` failed, when `exc` is a dependency not answering (logged once per outage
    and process); None for any other failure."""
    dependency = dependency_of(exc)
    if dependency is None:
        return None
    now = time.monotonic()
    with _lock:
        first = now - _last_logged.get(dependency, -OUTAGE_GAP) >= OUTAGE_GAP
        _last_logged[dependency] = now
    if first:
        logger.error("The %s is not answering (%s: %s); requests get 503", dependency, type(exc).__name__, exc)
    what = "The database" if dependency == "database" else "The shared cache"
    return ServiceUnavailable(data=f"{what} is not answering; try again shortly", retry_after=RETRY_AFTER)
