"""Protocol 2026-07-28 requests on the in-process HTTP app: the per-request envelope, its routing headers, and
reading a response that may be JSON or an SSE stream (subscriptions/listen, a call that notifies)."""

from __future__ import annotations

import json
from typing import Any

from asgiref.testing import ApplicationCommunicator

from mcpsite.guard import RequestGuard

VERSION = "2026-07-28"
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def envelope(id_: int | str, method: str, params: dict | None = None, capabilities: dict | None = None) -> dict:
    params = dict(params or {})
    meta = {
        **params.pop("_meta", {}),
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": meta}}


def routing_headers(message: dict) -> list[tuple[bytes, bytes]]:
    """The headers a 2026-07-28 client sends with `message`."""
    headers = [(b"mcp-protocol-version", VERSION.encode()), (b"mcp-method", message["method"].encode())]
    if (key := NAME_PARAM.get(message["method"])) is not None:
        headers.append((b"mcp-name", message["params"][key].encode()))
    return headers


def http_scope(raw_key: str, headers: list[tuple[bytes, bytes]]) -> dict:
    base = {
        b"host": b"127.0.0.1:8000",
        b"content-type": b"application/json",
        b"accept": b"application/json, text/event-stream",
        b"authorization": f"Bearer {raw_key}".encode(),
    }
    return {
        "type": "http", "method": "POST", "path": "/mcp", "query_string": b"", "scheme": "http",
        "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5000),
        "headers": [*((k, v) for k, v in base.items() if k not in {name for name, _ in headers}), *headers],
    }  # fmt: skip


class Exchange:
    """One POST on the app, read as it arrives."""

    def __init__(self, app, raw_key: str, message: dict, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        headers = routing_headers(message) if headers is None else headers
        self.http = ApplicationCommunicator(RequestGuard(app), http_scope(raw_key, headers))
        self.message = message
        self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self._pending = b""
        self.ended = False

    async def start(self) -> Exchange:
        await self.http.send_input({"type": "http.request", "body": json.dumps(self.message).encode()})
        start = await self.http.receive_output(20)
        self.status, self.headers = start["status"], dict(start["headers"])
        return self

    @property
    def is_sse(self) -> bool:
        return self.headers.get(b"content-type", b"").startswith(b"text/event-stream")

    async def body(self) -> bytes:
        while not self.ended:
            part = await self.http.receive_output(20)
            self._pending += part.get("body", b"")
            self.ended = not part.get("more_body")
        return self._pending

    async def json(self) -> Any:
        return json.loads(await self.body())

    async def next_message(self, timeout: float = 20) -> dict:
        """The next JSON-RPC message of an SSE stream (keep-alive comments skipped)."""
        while True:
            frame, sep, rest = self._pending.partition(b"\r\n\r\n")
            if sep:
                self._pending = rest
                data = [line[6:] for line in frame.split(b"\r\n") if line.startswith(b"data: ")]
                if data:
                    return json.loads(b"".join(data))
                continue
            if self.ended:
                raise EOFError("the stream ended")
            part = await self.http.receive_output(timeout)
            self._pending += part.get("body", b"")
            self.ended = not part.get("more_body")

    async def disconnect(self) -> None:
        """The client goes away (closes the connection)."""
        await self.http.send_input({"type": "http.disconnect"})
        await self.http.wait(20)


async def exchange(app, raw_key: str, message: dict, headers: list[tuple[bytes, bytes]] | None = None) -> tuple:
    """(status, headers, decoded JSON body) of one complete 2026-07-28 POST answered as JSON."""
    one = await Exchange(app, raw_key, message, headers).start()
    return one.status, one.headers, await one.json()
