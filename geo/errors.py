"""geo's errors, carrying the seed's error codes (section 6) and rendered in-band as the seed shows.

The seed answers every failure with `{"error": {"code", "message", "location?"}}` and never with
`results`; `render_error` below turns any ApplicationError raised during a call into that shape.
"""

from __future__ import annotations

import re
from typing import Any

from mcpsite.core.errors import ApplicationError, ErrorKind, InvalidParams


class GeoError(ApplicationError):
    """A resolve_points failure. `seed_code` is the seed's string code; `location` names the point;
    `upstream_status` is GaluchatAPI's HTTP status when the failure is its answer (logged, never sent)."""

    seed_code = "INTERNAL"
    # Failures that come from GaluchatAPI (the seed: log them with their status and message).
    upstream = False

    def __init__(self, message: str, location: str | None = None, *, upstream_status: int | None = None):
        self.location = location
        self.upstream_status = upstream_status
        super().__init__(message, data={"code": self.seed_code, "location": location})

    def as_seed_error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.seed_code, "message": self.message}
        if self.location is not None:
            error["location"] = self.location
        return {"error": error}


class InvalidInput(GeoError):
    seed_code = "INVALID_INPUT"
    kind = ErrorKind.INVALID_PARAMS


class UpstreamRateLimited(GeoError):
    seed_code = "RATE_LIMIT"
    kind = ErrorKind.UPSTREAM_RATE_LIMITED
    upstream = True


class ApiError(GeoError):
    seed_code = "API_ERROR"
    kind = ErrorKind.UPSTREAM_FAILED
    upstream = True


class OutOfCoverage(GeoError):
    seed_code = "OUT_OF_COVERAGE"
    kind = ErrorKind.UPSTREAM_UNUSABLE
    upstream = True  # raised when GaluchatAPI's answer does not fit the request


class GeoInternalError(GeoError):
    seed_code = "INTERNAL"
    kind = ErrorKind.INTERNAL


class ResolveCancelled(GeoError):
    """The caller cancelled the call (MCP notifications/cancelled): no further GaluchatAPI request was sent."""

    seed_code = "INTERNAL"
    kind = ErrorKind.INTERNAL


def point_location(index: int, ref: Any = None, *, has_ref: bool = False) -> str:
    """`points[3]`, or `points[3] (ref "p4")` when the point has a ref: the seed's location."""
    if has_ref and ref is not None:
        return f'points[{index}] (ref "{ref}")' if isinstance(ref, str) else f"points[{index}] (ref {ref!r})"
    return f"points[{index}]"


_PATH_PREFIX = re.compile(r"^(?P<path>[A-Za-z_][\w.\[\]]*): ")


def render_error(exc: ApplicationError) -> dict[str, Any]:
    """Any ApplicationError as the seed's in-band error (the dispatcher's schema errors become INVALID_INPUT)."""
    if isinstance(exc, GeoError):
        return exc.as_seed_error()
    if isinstance(exc, InvalidParams):
        match = _PATH_PREFIX.match(exc.detail)
        error = {"code": "INVALID_INPUT", "message": exc.detail}
        if match:
            error["location"] = match["path"]
        return {"error": error}
    return {"error": {"code": "INTERNAL", "message": "Internal error"}}
