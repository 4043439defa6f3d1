"""What a tool may ask of the client during one call: a confirmation, progress, whether it was cancelled.

Tools call `ctx.interaction` (registry.CallContext); transports that cannot do any of it (seed JSON-RPC, REST,
WebSocket, stateless HTTP) leave the default `NO_INTERACTION`, so a tool behaves exactly as its seed says. The MCP
server builds a `SessionInteraction` (server.py) from the SDK's request context. Nothing here imports the SDK.
"""

from __future__ import annotations

import enum


class Confirmation(enum.StrEnum):
    """The user's answer to a confirmation: MCP elicitation's three actions."""

    ACCEPT = "accept"
    DECLINE = "decline"
    CANCEL = "cancel"


class Interaction:
    """No client to ask: nothing to confirm with, progress goes nowhere, never cancelled."""

    def can_confirm(self) -> bool:
        return False

    def confirm(self, message: str) -> Confirmation:
        raise RuntimeError("This call cannot ask the user; check can_confirm() first")

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        return None

    def cancelled(self) -> bool:
        return False


NO_INTERACTION = Interaction()
