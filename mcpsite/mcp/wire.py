"""How the transports put an `ApplicationError` on the wire: its kind's JSON-RPC code and HTTP status, in one table.

The codes are the seeds' (409, 403, 404 … where a seed shows them; JSON-RPC's -326xx otherwise). The HTTP status
is the one a transport answers with when the error refuses a whole HTTP request (auth, scope, rate, size); a tool's
failure travels inside a 200 JSON-RPC response, so its status is 200.
"""

from __future__ import annotations

from typing import Any

from mcpsite.core.errors import ApplicationError, ErrorKind

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP's code for a resource that does not exist (spec 2025-11-25: server/resources, "Error Handling"); from
# 2026-07-28 on it is Invalid Params (SEP-2164), with the same message and data.
RESOURCE_NOT_FOUND = -32002

# kind: (JSON-RPC code, HTTP status when the error answers a whole request)
WIRE: dict[ErrorKind, tuple[int, int]] = {
    ErrorKind.PARSE_ERROR: (PARSE_ERROR, 400),
    ErrorKind.INVALID_REQUEST: (INVALID_REQUEST, 400),
    ErrorKind.METHOD_NOT_FOUND: (METHOD_NOT_FOUND, 404),
    ErrorKind.INVALID_PARAMS: (INVALID_PARAMS, 200),
    ErrorKind.UNKNOWN_TOOL: (INVALID_PARAMS, 404),
    ErrorKind.INTERNAL: (INTERNAL_ERROR, 200),
    ErrorKind.UNAUTHORIZED: (401, 401),
    ErrorKind.FORBIDDEN: (403, 200),
    ErrorKind.SCOPE_DENIED: (403, 403),
    ErrorKind.NOT_FOUND: (404, 200),
    ErrorKind.RESOURCE_NOT_FOUND: (RESOURCE_NOT_FOUND, 404),
    ErrorKind.CONFLICT: (409, 200),
    ErrorKind.RATE_LIMITED: (429, 429),
    ErrorKind.UNAVAILABLE: (503, 503),
    ErrorKind.PAYLOAD_TOO_LARGE: (INVALID_REQUEST, 413),
    ErrorKind.REQUEST_TIMEOUT: (INVALID_REQUEST, 408),
    ErrorKind.UPSTREAM_RATE_LIMITED: (429, 200),
    ErrorKind.UPSTREAM_FAILED: (502, 200),
    ErrorKind.UPSTREAM_UNUSABLE: (422, 200),
    # As HTTP's Idempotency-Key draft and ACP answer them: 422 for other arguments, 409 (with Retry-After) in flight.
    ErrorKind.IDEMPOTENCY_CONFLICT: (422, 200),
    ErrorKind.IDEMPOTENCY_IN_PROGRESS: (409, 200),
}


def jsonrpc_code(error: ApplicationError) -> int:
    return WIRE[error.kind][0]


def http_status(error: ApplicationError) -> int:
    """The HTTP status when this error answers a whole HTTP request by itself."""
    return WIRE[error.kind][1]


def as_jsonrpc(error: ApplicationError) -> dict[str, Any]:
    """The JSON-RPC error object every transport sends."""
    answer: dict[str, Any] = {"code": jsonrpc_code(error), "message": error.message}
    if error.data is not None:
        answer["data"] = error.data
    return answer


def rest_status(error: ApplicationError) -> int:
    """The HTTP status for the plain REST endpoints, where the status carries the outcome."""
    code, status = WIRE[error.kind]
    if status != 200:
        return status
    if 400 <= code < 600:
        return code
    return {PARSE_ERROR: 400, INVALID_REQUEST: 400, INVALID_PARAMS: 400, METHOD_NOT_FOUND: 404}.get(code, 500)
