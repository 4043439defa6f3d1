"""MCP content blocks: what a tool or prompt answers with when one JSON object is not the answer.

Tools return a JSON-able dict (the seed's result), which every transport renders as JSON. A tool whose answer is
an image, audio or a document returns `Content(...)` built from the block helpers below instead; the MCP server
sends the blocks as they are, and the other transports (seed JSON-RPC, REST, WebSocket) send `as_data()`. Prompts
may render to a list of blocks (one user message each). Blocks are plain dicts in MCP's wire shape (camelCase), so
nothing here imports the SDK.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

Block = dict[str, Any]


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def image(data: bytes, mime_type: str) -> Block:
    return {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime_type}


def audio(data: bytes, mime_type: str) -> Block:
    return {"type": "audio", "data": base64.b64encode(data).decode(), "mimeType": mime_type}


def resource_contents(uri: str, mime_type: str, body: str | bytes) -> dict[str, Any]:
    """One resource's contents as MCP sends them: `text`, or `blob` (base64) for bytes."""
    if isinstance(body, bytes):
        return {"uri": uri, "mimeType": mime_type, "blob": base64.b64encode(body).decode()}
    return {"uri": uri, "mimeType": mime_type, "text": body}


def embedded_resource(uri: str, mime_type: str, body: str | bytes) -> Block:
    return {"type": "resource", "resource": resource_contents(uri, mime_type, body)}


@dataclass(frozen=True)
class Content:
    """A tool result made of content blocks; `structured` (optional) is also sent as MCP's structuredContent."""

    blocks: tuple[Block, ...]
    structured: dict[str, Any] | None = None

    def as_data(self) -> dict[str, Any]:
        """The result for transports without content blocks: the structured value, else the blocks themselves."""
        return self.structured if self.structured is not None else {"content": list(self.blocks)}
