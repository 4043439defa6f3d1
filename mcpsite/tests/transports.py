"""One JSON-RPC message over any transport, in process: Streamable HTTP (`/mcp…`, either protocol era), stdio
(the real `serve_stdio` on in-memory files), the WebSocket, and Django's `/rpc` and REST views."""

from __future__ import annotations

import io
import json

import anyio

from mcpsite.mcp.stdio import serve_stdio
from reminders.tests.ws_client import exchange

from .test_serving import request as mcp_request
from .test_serving import running_site

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def message(method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": 7, "method": method, **({"params": params} if params is not None else {})}


class Transports:
    """Send one message over a transport as `raw_key`; each answers (HTTP status, the JSON-RPC answer or REST body).
    Use with `transactional_db`: the MCP transports run the dispatcher in worker threads."""

    def __init__(self, raw_key: str, http_post) -> None:
        self.raw_key, self.http_post = raw_key, http_post

    def mcp(self, path: str, message: dict, version: str | None = None) -> tuple[int, dict]:
        """POST to the Streamable HTTP app at `path`; at `version`'s protocol (header and `_meta`) if given."""
        headers: list[tuple[bytes, bytes]] = []
        if version is not None:
            message = {**message, "params": {**message.get("params", {}), "_meta": META}}
            headers = [(b"mcp-protocol-version", version.encode()), (b"mcp-method", message["method"].encode())]
            if "name" in message["params"]:
                headers.append((b"mcp-name", message["params"]["name"].encode()))

        async def run():
            async with running_site() as app:
                return await mcp_request(app, self.raw_key, message, headers=headers, path=path)

        status, _headers, body = anyio.run(run)
        return status, json.loads(body)

    def mcp_2026(self, path: str, message: dict) -> tuple[int, dict]:
        return self.mcp(path, message, MODERN)

    def stdio(self, group: str | None, message: dict) -> tuple[int, dict]:
        """`mcp_stdio [--group group]`; stdio has no status: 200."""
        output = io.StringIO()
        serve_stdio(groups=[group] if group else None, stdin=io.StringIO(json.dumps(message) + "\n"), stdout=output)
        (line,) = output.getvalue().splitlines()
        return 200, json.loads(line)

    def ws(self, path: str | None, message: dict) -> tuple[int, dict]:
        (answer,), _closed = exchange(self.raw_key, [message], path=path or "/ws")
        return 101, answer

    def http(self, path: str, message: dict) -> tuple[int, dict]:
        response = self.http_post(path, message)
        return response.status_code, response.json()
