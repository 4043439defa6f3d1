"""WebSocket transport at `/ws` and `/ws/<group>` (the reminders seed's voice clients).

`Authorization: Bearer <key>` on the handshake: the ingress (mcpsite.guard) refuses a handshake without a good
credential (401 with the seed's body `{"code":401,"message":"Invalid API key"}`) and leaves the principal in the
scope. Each text frame is a JSON-RPC 2.0 message or batch (initialize, ping, tools/list, tools/call), answered as
the seeds show, each message counted against the key's rate. The server bounds a frame's size before buffering it
(`--ws-max-size`, scripts/serve); a frame over its endpoint's limit is refused here.
"""

from __future__ import annotations

from channels.generic.websocket import AsyncWebsocketConsumer

from mcpsite.core.errors import ApplicationError, InvalidRequest
from mcpsite.core.jsonutil import dumps

from . import caps, dispatch, jsonrpc, registry, threads
from .auth import SCOPE_PRINCIPAL
from .registry import tool_groups

CLOSE_UNKNOWN_GROUP = 4404


class McpWebSocketConsumer(AsyncWebsocketConsumer):
    tool_groups: list[str] | None = None

    async def connect(self) -> None:
        group = self.scope["url_route"]["kwargs"].get("group")
        if group is not None and group not in tool_groups():
            await self.close(code=CLOSE_UNKNOWN_GROUP)
            return
        if SCOPE_PRINCIPAL not in self.scope:  # never served without the ingress, which authenticates
            await self.close(code=CLOSE_UNKNOWN_GROUP)
            return
        self.tool_groups = [group] if group else None
        self.api_key = self.scope[SCOPE_PRINCIPAL]
        await self.accept()

    async def receive(self, text_data=None, bytes_data=None) -> None:
        ctx = dispatch.call_context(transport="ws", api_key=self.api_key)
        # A connection answers one message at a time; across its connections a key holds at most
        # MCP_KEY_CONCURRENCY worker threads, as on every transport (the rest wait here, holding none).
        async with caps.key_slot(self.api_key):
            answer = await threads.in_worker_thread(self._answer)(ctx, text_data)
        if answer is not None:
            await self.send(text_data=dumps(answer))

    def _answer(self, ctx, text_data: str | None):
        try:
            if text_data is None:
                dispatch.account(ctx)
                raise InvalidRequest(data="Send JSON-RPC as text frames")
            limit = registry.max_request_bytes(self.tool_groups)
            if len(text_data) > limit or len(text_data.encode()) > limit:
                dispatch.account(ctx)
                raise InvalidRequest(data=f"A message may be at most {limit} bytes")
            payload = jsonrpc.parse_counted(text_data, ctx)
        except ApplicationError as exc:
            return jsonrpc.error_response(None, exc)
        return jsonrpc.handle_payload(payload, ctx, self.tool_groups, allow_tool_methods=False)
