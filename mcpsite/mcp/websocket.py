"""WebSocket transport at `/ws` and `/ws/<group>` (the reminders seed's voice clients).

`Authorization: Bearer <key>` on the handshake. Each text frame is a JSON-RPC 2.0 message or batch
(initialize, ping, tools/list, tools/call), answered as the seeds show. Without a valid key the first
request is answered `{"code":401,"message":"Invalid API key"}` with its id, and the socket closes.
"""

from __future__ import annotations

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from mcpsite.core.errors import ApplicationError, InvalidRequest, Unauthorized
from mcpsite.core.jsonutil import dumps

from . import dispatch, jsonrpc
from .auth import api_key_from_scope
from .registry import tool_groups
from .wire import as_jsonrpc

CLOSE_UNAUTHORIZED = 4401
CLOSE_UNKNOWN_GROUP = 4404


class McpWebSocketConsumer(AsyncWebsocketConsumer):
    api_key = None
    auth_error: ApplicationError | None = None
    tool_groups: list[str] | None = None

    async def connect(self) -> None:
        group = self.scope["url_route"]["kwargs"].get("group")
        if group is not None and group not in tool_groups():
            await self.close(code=CLOSE_UNKNOWN_GROUP)
            return
        self.tool_groups = [group] if group else None
        try:
            self.api_key = await api_key_from_scope(self.scope)
        except Unauthorized:
            # Answered on the first request, with its id: the seed's body for this, its transport, whatever was
            # missing or wrong.
            self.auth_error = Unauthorized()
        await self.accept()

    async def receive(self, text_data=None, bytes_data=None) -> None:
        if text_data is None:
            await self._send(jsonrpc.error_response(None, InvalidRequest(data="Send JSON-RPC as text frames")))
            return
        if len(text_data.encode()) > settings.MCP_MAX_BODY_BYTES:
            error = InvalidRequest(data=f"A message may be at most {settings.MCP_MAX_BODY_BYTES} bytes")
            await self._send(jsonrpc.error_response(None, error))
            return
        try:
            payload = jsonrpc.parse(text_data)
        except ApplicationError as exc:
            await self._send(jsonrpc.error_response(None, exc))
            return
        if self.auth_error is not None:
            await self._refuse(payload)
            return
        ctx = dispatch.call_context(transport="ws", api_key=self.api_key)
        # A connection answers one message at a time; across its connections a key holds at most
        # MCP_KEY_CONCURRENCY worker threads, as on /mcp (the rest wait here, holding none).
        async with dispatch.key_slot(self.api_key):
            answer = await dispatch.in_worker_thread(jsonrpc.handle_payload)(
                payload, ctx, self.tool_groups, allow_tool_methods=False
            )
        if answer is not None:
            await self._send(answer)

    async def _refuse(self, payload) -> None:
        first = payload[0] if isinstance(payload, list) and payload else payload
        request_id = first.get("id") if isinstance(first, dict) else None
        assert self.auth_error is not None  # only a connection whose key was refused is answered this way
        await self._send({"jsonrpc": "2.0", "id": request_id, "error": as_jsonrpc(self.auth_error)})
        await self.close(code=CLOSE_UNAUTHORIZED)

    async def _send(self, message) -> None:
        await self.send(text_data=dumps(message))
