"""Seed-style JSON-RPC 2.0, shared by `POST /rpc` (cinema seed) and the WebSocket (reminders seed).

Methods: `initialize`, `ping`, `tools/list`, `tools/call`, and — on /rpc — a tool's own name with its
arguments as `params`, as the cinema seed's samples do. A tool call's `result` is the tool's own
result object, exactly as the seeds show (not wrapped in MCP content blocks).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from mcpsite.core.errors import ApplicationError, InvalidRequest, MethodNotFound, ParseError
from mcpsite.core.scopes import server_info

from . import dispatch, idempotency, registry
from .registry import CallContext
from .wire import as_jsonrpc

NO_ID = object()
# Where the ingress (mcpsite.guard) leaves the request body's JSON, or the ParseError it gave, so that nothing
# downstream parses the body again (the ASGI scope; a Django view finds it in request.META).
SCOPE_JSON = "mcpsite.json"


def parse(body: bytes | str) -> Any:
    """The JSON of a request body or message, or ParseError (-32700) for anything a decoder refuses.

    Deep nesting (`[[[[…` a hundred thousand times, well under the body limit) makes the standard decoder raise
    RecursionError and others a depth error; either is the client's malformed input, never a 500 or a dropped
    socket.
    """
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ParseError(data=f"Invalid JSON: {exc}") from None
    except RecursionError:
        raise ParseError(data="Invalid JSON: nested too deeply") from None


def parse_kept(body: bytes) -> Any:
    """`parse` for the ingress: a malformed body gives its ParseError as the value, for whoever answers it."""
    try:
        return parse(body)
    except ParseError as exc:
        return exc


def parsed(carrier: Mapping[str, Any], body: bytes | str) -> Any:
    """The body's JSON as the ingress parsed it into `carrier` (the ASGI scope, or a Django request's META); parsed
    here for a request served without the ingress (Django's test client, WSGI)."""
    if SCOPE_JSON not in carrier:
        return parse(body)
    value = carrier[SCOPE_JSON]
    if isinstance(value, ParseError):
        raise ParseError(data=value.data)
    return value


def parse_counted(body: bytes | str, ctx: CallContext, carrier: Mapping[str, Any] | None = None) -> Any:
    """`parsed` (from `carrier` where the ingress parsed it), where an unreadable body still counts as one request
    of the caller (then ParseError)."""
    try:
        return parse(body) if carrier is None else parsed(carrier, body)
    except ParseError:
        dispatch.account(ctx)
        raise


def error_response(request_id: Any, error: ApplicationError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None if request_id is NO_ID else request_id, "error": as_jsonrpc(error)}


def _initialize_result(params: Any, groups: Iterable[str] | None) -> dict[str, Any]:
    requested = params.get("protocolVersion") if isinstance(params, dict) else None
    info = server_info(None if groups is None else list(groups))
    return {
        "protocolVersion": requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION,
        "capabilities": {"tools": {"listChanged": False, **idempotency.CAPABILITY}},
        "serverInfo": {"name": info.name, "version": info.version},
    }


def _call(message: dict, ctx: CallContext, groups: Iterable[str] | None, allow_tool_methods: bool) -> Any:
    method, params = message["method"], message.get("params")
    if method == "initialize":
        return _initialize_result(params, groups)
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [spec.describe() for spec in dispatch.list_tools(ctx, groups)]}
    if method == "tools/call":
        if not isinstance(params, dict):
            raise InvalidRequest(data="params must be an object with 'name' and 'arguments'")
        # `ctx` holds this call's idempotency keys (handle_one), and says after the call whether it was a replay.
        return dispatch.call_tool(ctx, params.get("name"), params.get("arguments"), groups).data
    # A method naming no tool is an unknown method (-32601), unlike an unknown name in tools/call's params (-32602).
    if allow_tool_methods and dispatch.served_tool(method, groups) is not None:
        if params is not None and not isinstance(params, dict):
            raise InvalidRequest(data="params must be an object of named arguments")
        return dispatch.call_tool(ctx, method, params, groups).data
    raise MethodNotFound(data=f"Unknown method: {method}")


def handle_one(message: Any, ctx: CallContext, groups=None, *, allow_tool_methods: bool) -> dict | None:
    """Answer one JSON-RPC message (counted first, whatever it holds); None for a notification."""
    request_id = message.get("id", NO_ID) if isinstance(message, dict) else NO_ID
    try:
        dispatch.account(ctx, called_tool(message, tool_methods=allow_tool_methods))
    except ApplicationError as exc:
        return None if request_id is NO_ID and isinstance(message, dict) else error_response(request_id, exc)
    if not isinstance(message, dict):
        return error_response(NO_ID, InvalidRequest(data="A request must be a JSON object"))
    valid_id = (
        request_id is NO_ID
        or request_id is None
        or (isinstance(request_id, str | int) and not isinstance(request_id, bool))
    )
    if not valid_id:
        return error_response(NO_ID, InvalidRequest(data="id must be a string, a number or null"))
    if message.get("jsonrpc") != "2.0":
        return error_response(request_id, InvalidRequest(data='"jsonrpc" must be "2.0"'))
    if not isinstance(message.get("method"), str) or not message["method"]:
        return error_response(request_id, InvalidRequest(data='"method" must be a non-empty string'))
    tools_call = message["method"] == "tools/call"
    if tools_call:
        ctx = idempotency.keyed(ctx, params=message.get("params"))
    try:
        result = _call(message, ctx, groups, allow_tool_methods)
    except ApplicationError as exc:
        if request_id is NO_ID:
            return None
        answer = error_response(request_id, exc)
        # A tools/call's replayed outcome, error or result, carries REPLAYED_META.
        return {**answer, "error": idempotency.marked_meta(ctx, answer["error"])} if tools_call else answer
    if request_id is NO_ID:
        return None
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": idempotency.marked_meta(ctx, result) if tools_call else result,
    }


def request_id(message: Any) -> str | int | None:
    """The id of a single request, for the refusal of the whole request; None when it has no valid one."""
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def called_tool(message: Any, *, tool_methods: bool = False) -> Any:
    """The tool a message calls (`tools/call`'s name, or with `tool_methods` (/rpc) a method naming a tool), for the
    audit of a call refused for the key's rate; None for anything else."""
    if not isinstance(message, dict) or not isinstance(method := message.get("method"), str):
        return None
    params = message.get("params")
    if method == "tools/call":
        return params.get("name") if isinstance(params, dict) else None
    return method if tool_methods and registry.get(method) is not None else None


def _batch_refusal(payload: list, ctx: CallContext, allow_tool_methods: bool) -> ApplicationError | None:
    """Why a batch is refused whole, before any of its messages runs: empty, too large, or one request key over
    several writes (idempotency.batch_refusal)."""
    if not payload:
        return InvalidRequest(data="Empty batch")
    if len(payload) > settings.MCP_MAX_BATCH:
        return InvalidRequest(data=f"Batch larger than {settings.MCP_MAX_BATCH}")
    return idempotency.batch_refusal(ctx, [called_tool(m, tool_methods=allow_tool_methods) for m in payload])


def handle_payload(payload: Any, ctx: CallContext, groups=None, *, allow_tool_methods: bool) -> Any:
    """A single message or a batch array; None when nothing needs an answer."""
    if isinstance(payload, list):
        if (refusal := _batch_refusal(payload, ctx, allow_tool_methods)) is not None:
            dispatch.account(ctx)  # refused whole, counted once
            return error_response(NO_ID, refusal)
        answers = [handle_one(m, ctx, groups, allow_tool_methods=allow_tool_methods) for m in payload]
        return [a for a in answers if a is not None] or None
    return handle_one(payload, ctx, groups, allow_tool_methods=allow_tool_methods)
