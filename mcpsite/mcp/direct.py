"""A plain `tools/call` on `/mcp`, answered without the SDK's per-request machinery (decision 0016).

The SDK's session managers serve every request of `/mcp`; this module answers one kind of request before them, the
one agents send most: a plain call. Plain means:

- a single JSON-RPC request, `tools/call`, whose params hold the tool, its arguments, an idempotency key and (on
  2026-07-28) the request envelope, nothing else: no progress token, no log level, no `requestState`, no answers;
- from a client that declared no capabilities, on a stateless exchange answered as JSON: 2025-11-25 with the
  manager stateless in JSON mode (the default), or 2026-07-28 in either response mode (such a call never notifies,
  so the SDK's SSE mode answers it as JSON too);
- of one of our tools that runs in the tool pool (an upstream-bound tool takes the SDK's path, where closing the
  stream cancels it), asks no confirmation and needs no client capability;
- passing the SDK's own checks, through its public functions: Accept, the host and origin rules, the routing-header
  ladder and envelope of 2026-07-28; and no trace recording (the SDK's middleware writes the MCP span).

The call runs in the same pipeline as on the SDK's path (`dispatch.acall_tool`, `server.tool_call_result`: every
stage, the audit, the idempotency key), its worker thread taking the request's count first (the ingress's
Admission; refused, the answer is the ingress's refusal), and its answer is the SDK's: the result shaped by the SDK's
serialiser for the request's revision with its `serverInfo` stamp on 2026-07-28, errors by the SDK's exception
mapping and its status table. `mcpsite/tests/test_direct.py` holds the two answers equal, call by call.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    x_mcp_header_map,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp_types.methods import serialize_server_result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request

from mcpsite.core.jsonutil import dumps
from mcpsite.tracing import recording

from . import dispatch, idempotency, jsonrpc, registry
from .registry import CallContext, ToolSpec
from .server import tool_call_result

logger = logging.getLogger(__name__)

_PARAMS = frozenset({"name", "arguments", "_meta", idempotency.KEY_PARAM})
_LEGACY_META = frozenset({idempotency.KEY_PARAM})
_MODERN_META = frozenset(
    {
        types.PROTOCOL_VERSION_META_KEY,
        types.CLIENT_INFO_META_KEY,
        types.CLIENT_CAPABILITIES_META_KEY,
        idempotency.KEY_PARAM,
    }
)
_SESSION_HEADER = MCP_SESSION_ID_HEADER.lower()
_PARAM_HEADER_PREFIX = MCP_PARAM_HEADER_PREFIX.lower()


@dataclasses.dataclass(frozen=True)
class PlainCall:
    request_id: str | int
    params: dict[str, Any]
    spec: ToolSpec
    version: str
    modern: bool


class DirectCalls:
    """The plain calls of one `/mcp` app (its server, its host rules, its managers' modes)."""

    def __init__(
        self,
        server: Server,
        security: TransportSecurityMiddleware,
        *,
        legacy_json: bool,
        modern_json: bool,
        context_of: Callable[[Any], tuple[CallContext, list[str] | None]],
    ) -> None:
        """`legacy_json`: the 2025-11-25 manager is stateless and answers JSON; `modern_json`: the 2026-07-28
        manager answers JSON (MCP_MODERN_JSON_RESPONSE), else it is in SSE mode and wants both in Accept;
        `context_of`: the transport's context of a request (as the SDK's handlers get it) and its endpoint's
        groups."""
        self.context_of = context_of
        self.server = server
        self.security = security
        self.legacy_json = legacy_json
        self.modern_json = modern_json

    async def answer(self, scope, send, *, modern: bool) -> bool:
        """Answer the request when it is a plain call (True); False leaves it, untouched, to the SDK."""
        call = await self.plain_call(scope, modern=modern)
        if call is None:
            return False
        status, reply = await self._reply(scope, call)  # NotAdmitted: the ingress answers the refused count
        payload = dumps(reply).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})
        return True

    async def plain_call(self, scope, *, modern: bool) -> PlainCall | None:
        """The request's call when it is plain (module docstring); None for anything else."""
        message = scope.get(jsonrpc.SCOPE_JSON)
        call = _plain_message(message)
        if call is None or recording():
            return None
        request = Request(scope)
        if not await self._passes_http_checks(request, modern=modern):
            return None
        if modern:
            return _modern_call(message, request, *call)
        return self._legacy_call(request, *call)

    async def _passes_http_checks(self, request: Request, *, modern: bool) -> bool:
        """What the SDK's transport checks before it reads a POST: the method, JSON in, Accept, host and origin."""
        content_type = request.headers.get("content-type", "").split(";")[0].strip()
        if request.method != "POST" or content_type != "application/json":
            return False
        has_json, has_sse = check_accept_headers(request)
        if not has_json or (modern and not self.modern_json and not has_sse):
            return False
        return await self.security.validate_request(request, is_post=True) is None

    def _legacy_call(self, request: Request, request_id, params, spec) -> PlainCall | None:
        """A 2025-11-25 plain call: the stateless JSON manager's, no session header, no `_meta` but a key."""
        version = request.headers.get("mcp-protocol-version") or types.DEFAULT_NEGOTIATED_VERSION
        if not self.legacy_json or _SESSION_HEADER in request.headers or version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None
        if not _meta_within(params, _LEGACY_META):
            return None
        return PlainCall(request_id, params, spec, version, modern=False)

    async def _reply(self, scope, call: PlainCall) -> tuple[int, dict[str, Any]]:
        """(status, JSON-RPC response) of the call, as the SDK's transport for its revision writes them."""
        call_ctx, groups = self.context_of(scope)
        call_ctx = idempotency.keyed(dataclasses.replace(call_ctx, protocol=call.version), params=call.params)
        admission = scope.get(dispatch.SCOPE_ADMISSION)
        running = dispatch.acall_tool(call_ctx, call.spec.name, call.params.get("arguments"), groups, admission)
        try:
            shaped = self._shaped(await tool_call_result(running, call.spec, call_ctx, scope), call)
        except dispatch.NotAdmitted:
            raise
        except Exception as exc:  # the SDK's mapping: MCPError's own error, else an internal error, logged
            error = handler_exception_to_error_data(exc)
            if error is None:
                logger.exception("tools/call of %s raised", call.spec.name)
                error = types.ErrorData(code=types.INTERNAL_ERROR, message="Internal server error")
            status = ERROR_CODE_HTTP_STATUS.get(error.code, 200) if call.modern else 200
            dumped = error.model_dump(by_alias=True, mode="json", exclude_none=True)
            return status, {"jsonrpc": "2.0", "id": call.request_id, "error": dumped}
        return 200, {"jsonrpc": "2.0", "id": call.request_id, "result": shaped}

    def _shaped(self, result: Any, call: PlainCall) -> dict[str, Any]:
        """The result as the SDK's serialisation writes it for the call's revision (its schema's fields only; the
        `serverInfo` stamp on 2026-07-28)."""
        if isinstance(result, types.CallToolResult):
            result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        try:
            shaped = serialize_server_result("tools/call", call.version, result)
        except ValidationError:  # a server bug, answered as the SDK answers it; the detail stays in the log
            logger.exception("tools/call of %s returned an invalid result", call.spec.name)
            raise MCPError(code=types.INTERNAL_ERROR, message="Handler returned an invalid result") from None
        if call.modern:
            meta = shaped.get("_meta") or {}
            if meta.get(types.SERVER_INFO_META_KEY) is None:
                shaped["_meta"] = {**meta, types.SERVER_INFO_META_KEY: self.server.server_info_stamp}
        return shaped


def _plain_message(message: Any) -> tuple[str | int, dict[str, Any], ToolSpec] | None:
    """(request id, params, tool) of a single `tools/call` request whose params are plain and whose tool may be
    called directly."""
    if not isinstance(message, dict) or message.keys() != {"jsonrpc", "id", "method", "params"}:
        return None
    request_id, params = message["id"], message["params"]
    if message["jsonrpc"] != "2.0" or message["method"] != "tools/call" or not isinstance(params, dict):
        return None
    if not isinstance(request_id, str | int) or isinstance(request_id, bool) or not params.keys() <= _PARAMS:
        return None
    name, arguments = params.get("name"), params.get("arguments")
    spec = registry.get(name) if isinstance(name, str) else None
    if spec is None or spec.upstream or spec.confirm or spec.client_capabilities:
        return None
    if not (arguments is None or isinstance(arguments, dict)) or _declares_param_headers(spec):
        return None
    return request_id, params, spec


def _modern_call(message: dict[str, Any], request: Request, request_id, params, spec) -> PlainCall | None:
    """A 2026-07-28 plain call: the SDK's routing-header ladder and envelope pass, no `Mcp-Param-*` header, a
    client that declared no capabilities."""
    if not _meta_within(params, _MODERN_META) or find_duplicated_routing_header(request.headers.items()) is not None:
        return None
    if any(name.startswith(_PARAM_HEADER_PREFIX) for name in request.headers):
        return None
    route = classify_inbound_request(message, headers=dict(request.headers))
    if not isinstance(route, InboundModernRoute) or route.client_capabilities:
        return None
    return PlainCall(request_id, params, spec, route.protocol_version, modern=True)


def _meta_within(params: dict[str, Any], allowed: frozenset[str]) -> bool:
    if "_meta" not in params:
        return True
    meta = params["_meta"]
    return isinstance(meta, dict) and meta.keys() <= allowed


_param_headers: dict[str, tuple[Any, bool]] = {}


def _declares_param_headers(spec: ToolSpec) -> bool:
    """Whether the tool's schema maps an argument to an `Mcp-Param-*` header (the SDK then checks the headers);
    kept per tool while its schema is the same object (a tool registered again under its name has a new one)."""
    cached = _param_headers.get(spec.name)
    if cached is None or cached[0] is not spec.input_schema:
        cached = _param_headers[spec.name] = (spec.input_schema, bool(x_mcp_header_map(spec.input_schema)))
    return cached[1]
