"""The one renderer of a refused request, per wire format, built from `wire.py`'s table.

A refusal answers a whole request (auth, scope, rate, size, an unavailable dependency): its status, its body in the
door's shape, and the headers the error owns (`WWW-Authenticate` for a 401, `Retry-After` where the error knows
when to come back). The ingress, the MCP transport, the seed views and the WebSocket render refusals only here.
"""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpResponse

from mcpsite.core.errors import ApplicationError
from mcpsite.core.jsonutil import dumps

from .wire import as_jsonrpc, http_status, rest_status

Shape = Literal["jsonrpc", "rest"]
Headers = list[tuple[bytes, bytes]]

DEFAULT_CHALLENGE = b'Bearer realm="mcpsite"'
JSON = b"application/json; charset=utf-8"
# A refusal met after the SDK took an MCP request over (a dependency down in the middle of a call): the SDK writes the
# JSON-RPC error, and the HTTP answer takes the refusal's status and headers (`refusing`).
SCOPE_REFUSAL = "mcpsite.refusal"


def jsonrpc_error(error: ApplicationError, request_id: Any = None) -> dict[str, Any]:
    """The JSON-RPC error response every JSON-RPC door sends."""
    return {"jsonrpc": "2.0", "id": request_id, "error": as_jsonrpc(error)}


def error_headers(error: ApplicationError, challenge: bytes | None = None) -> Headers:
    """The headers `error` owns: a challenge for a 401, `Retry-After` when it says when to come back."""
    headers: Headers = []
    if http_status(error) == 401 or challenge is not None:
        headers.append((b"www-authenticate", challenge or DEFAULT_CHALLENGE))
    if error.retry_after is not None:
        headers.append((b"retry-after", str(error.retry_after).encode()))
    return headers


def refusal(
    error: ApplicationError, shape: Shape, *, request_id: Any = None, challenge: bytes | None = None
) -> tuple[int, Headers, bytes]:
    """(status, headers, body) of a request refused with `error`, in the door's `shape`."""
    if shape == "rest":
        status, body = rest_status(error), {"error": as_jsonrpc(error)}
    else:
        status, body = http_status(error), jsonrpc_error(error, request_id)
    payload = dumps(body).encode()
    headers = [(b"content-type", JSON), (b"content-length", str(len(payload)).encode())]
    return status, [*headers, *error_headers(error, challenge)], payload


async def send_refusal(
    send,
    error: ApplicationError,
    shape: Shape = "jsonrpc",
    *,
    request_id: Any = None,
    challenge: bytes | None = None,
    extra: Headers = (),  # type: ignore[assignment]
) -> None:
    """Answer an ASGI HTTP request with the refusal."""
    status, headers, payload = refusal(error, shape, request_id=request_id, challenge=challenge)
    headers = [*headers[:2], *extra, *headers[2:]]  # the error's own headers last
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def refusing(send, scope: dict[str, Any]):
    """An ASGI `send` whose response starts with the status and headers of the refusal a call left in
    `scope[SCOPE_REFUSAL]` (a response that started streaming before it keeps its 200)."""

    async def sending(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start" and (error := scope.get(SCOPE_REFUSAL)) is not None:
            headers = [*message.get("headers", []), *error_headers(error)]
            message = {**message, "status": http_status(error), "headers": headers}
        await send(message)

    return sending


def django_refusal(error: ApplicationError, shape: Shape) -> HttpResponse:
    """The refusal as a Django response (the seed views)."""
    status, headers, payload = refusal(error, shape)
    response = HttpResponse(payload, status=status, content_type=JSON.decode())
    for name, value in headers[2:]:  # content type and length are the response's own
        response[name.decode()] = value.decode("latin-1")
    return response
