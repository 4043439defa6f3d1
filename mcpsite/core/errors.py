"""The one application-error hierarchy. Services raise these; transports render them.

A `ToolError` carries a JSON-RPC error code (seed codes such as 409/403/404 or the JSON-RPC
-326xx codes), a short message and optional `data`. `as_jsonrpc()` is the error object every
transport sends; tools whose seed has its own in-band error shape (geo, reminders) register a
renderer in the registry instead.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class ToolError(Exception):
    code: int = INTERNAL_ERROR
    message: str = "Internal error"
    # The HTTP status when this error answers a whole HTTP request by itself. Domain errors travel
    # inside a 200 JSON-RPC response; transport errors (auth, scope, rate, size) set their own.
    http_status: int = 200

    def __init__(self, message: str | None = None, data: Any = None):
        self.message = message or type(self).message
        self.data = data
        super().__init__(self.message)

    def as_jsonrpc(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @property
    def detail(self) -> str:
        """The most specific human text: the data's message when there is one."""
        if isinstance(self.data, str):
            return self.data
        if isinstance(self.data, dict) and isinstance(self.data.get("message"), str):
            return self.data["message"]
        return self.message


class ParseError(ToolError):
    code = PARSE_ERROR
    message = "Parse error"
    http_status = 400


class InvalidRequest(ToolError):
    code = INVALID_REQUEST
    message = "Invalid Request"
    http_status = 400


class MethodNotFound(ToolError):
    code = METHOD_NOT_FOUND
    message = "Method not found"
    http_status = 404


class InvalidParams(ToolError):
    code = INVALID_PARAMS
    message = "Invalid params"


class InternalError(ToolError):
    code = INTERNAL_ERROR
    message = "Internal error"


class Unauthorized(ToolError):
    code = 401
    message = "Invalid API key"
    http_status = 401


class Forbidden(ToolError):
    code = 403
    message = "Forbidden"


class ScopeDenied(Forbidden):
    """The API key lacks the tool's scope (a transport-level refusal, unlike a wrong password)."""

    http_status = 403


class NotFound(ToolError):
    code = 404
    message = "Not Found"


class Conflict(ToolError):
    code = 409
    message = "Conflict"


class RateLimited(ToolError):
    code = 429
    message = "Rate limit exceeded"
    http_status = 429


class ServiceUnavailable(ToolError):
    code = INTERNAL_ERROR
    message = "Service unavailable"
    http_status = 503


class PayloadTooLarge(ToolError):
    code = INVALID_REQUEST
    message = "Request body too large"
    http_status = 413


class RequestTimeout(ToolError):
    code = INVALID_REQUEST
    message = "Request body timed out"
    http_status = 408


def rest_status(error: ToolError) -> int:
    """The HTTP status for the plain REST endpoints, where the status carries the outcome."""
    if error.http_status != 200:
        return error.http_status
    if 400 <= error.code < 600:
        return error.code
    return {PARSE_ERROR: 400, INVALID_REQUEST: 400, INVALID_PARAMS: 400, METHOD_NOT_FOUND: 404}.get(error.code, 500)
