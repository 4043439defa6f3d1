"""stdio transport: the SDK's stdio server, answering clients that skip `initialize`.

The ledger seed's smoke test pipes a lone `tools/list` into the server. The SDK refuses any request
before `initialize`, so when the first request is something else we initialize on the client's
behalf (a synthetic `initialize` + `notifications/initialized`) and drop the synthetic response.
Normal clients that initialize themselves see the SDK's behaviour unchanged.
"""

from __future__ import annotations

from typing import TextIO

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import ErrorData, JSONRPCError, JSONRPCNotification, JSONRPCRequest
from mcp_types.version import LATEST_HANDSHAKE_VERSION
from pydantic import ValidationError

from mcpsite.core.scopes import server_info

from . import dispatch
from .registry import CallContext
from .server import build_server
from .wire import INVALID_REQUEST, PARSE_ERROR

AUTO_INIT_ID = "mcpsite-auto-initialize"


def _auto_initialize_messages() -> list[SessionMessage]:
    params = {
        "protocolVersion": LATEST_HANDSHAKE_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "stdio-client", "version": "0"},
    }
    return [
        SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=AUTO_INIT_ID, method="initialize", params=params)),
        SessionMessage(JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized")),
    ]


class _Pending:
    """Requests forwarded to the server and not yet answered.

    At EOF the SDK cancels whatever is in flight; `echo … | mcp_stdio` closes stdin at once, so the
    input side stays open until every request it forwarded has been answered.
    """

    def __init__(self) -> None:
        self.ids: set = set()
        self.drained = anyio.Event()

    def add(self, request_id) -> None:
        self.ids.add(request_id)

    def done(self, request_id) -> None:
        self.ids.discard(request_id)
        if not self.ids:
            self.drained.set()

    async def wait(self) -> None:
        while self.ids:
            self.drained = anyio.Event()
            await self.drained.wait()


def _unreadable_line_error(exc: Exception) -> SessionMessage:
    """JSON-RPC 2.0 answers an unreadable message with `id: null` (the SDK drops it silently)."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if any(e.get("type") == "json_invalid" for e in errors):
        error = ErrorData(code=PARSE_ERROR, message="Parse error", data="Each line must be one JSON-RPC message")
    else:
        error = ErrorData(code=INVALID_REQUEST, message="Invalid Request", data="Not a JSON-RPC 2.0 message")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


async def _pump_in(source, sink, replies, pending: _Pending) -> None:
    first = True
    async with sink, replies:
        async for item in source:
            if isinstance(item, Exception):
                await replies.send(_unreadable_line_error(item))
                continue
            if isinstance(item, SessionMessage):
                message = item.message
                if first and isinstance(message, JSONRPCRequest) and message.method not in ("initialize", "ping"):
                    for synthetic in _auto_initialize_messages():
                        await sink.send(synthetic)
                first = False
                if isinstance(message, JSONRPCRequest):
                    pending.add(message.id)
            await sink.send(item)
        await pending.wait()


async def _pump_out(source, sink, pending: _Pending) -> None:
    async with source, sink:
        async for item in source:
            request_id = getattr(item.message, "id", None)
            if request_id is not None and not isinstance(item.message, JSONRPCRequest):
                pending.done(request_id)
            if request_id == AUTO_INIT_ID:
                continue  # the answer to our synthetic initialize
            await sink.send(item)


def serve_stdio(
    *,
    groups: list[str] | None,
    owner=None,
    api_key=None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> None:
    """Serve MCP on stdin/stdout (or the text files given) until the input ends. stdio is trusted like any local
    process; given an `api_key`, it serves only what the key's scopes allow, as the key's owner."""
    owner = api_key.owner if api_key is not None else owner

    def context_for(_ctx):
        ctx = CallContext(transport="stdio", request_id=dispatch.new_request_id(), api_key=api_key, owner=owner)
        return ctx, groups

    server = build_server(context_for, subscriptions=True, info=server_info(groups))

    async def main() -> None:
        files = [anyio.wrap_file(file) if file is not None else None for file in (stdin, stdout)]
        async with stdio_server(*files) as (read_stream, write_stream):
            in_send, in_recv = anyio.create_memory_object_stream[SessionMessage | Exception](16)
            out_send, out_recv = anyio.create_memory_object_stream[SessionMessage](16)
            pending = _Pending()
            async with anyio.create_task_group() as tg:
                tg.start_soon(_pump_in, read_stream, in_send, out_send.clone(), pending)
                tg.start_soon(_pump_out, out_recv, write_stream, pending)
                async with out_send:
                    await server.run(in_recv, out_send, server.create_initialization_options())

    anyio.run(main)
