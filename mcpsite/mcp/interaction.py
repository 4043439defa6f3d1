"""What a tool may ask of the client during one call: a confirmation, progress, log messages, whether it was
cancelled.

Tools call `ctx.interaction` (registry.CallContext); transports that cannot do any of it (seed JSON-RPC, REST,
WebSocket) leave the default `NO_INTERACTION`, so a tool behaves exactly as its seed says. The MCP server builds a
`SessionInteraction` (calls.py: a server-to-client request within the call, protocol 2025-11-25) or a
`RoundTripInteraction` (calls.py: the call answers `input_required` and the client's retry brings the answer,
protocol 2026-07-28) from the SDK's request context. Nothing here imports the SDK.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from mcpsite.core.errors import InvalidParams


class Confirmation(enum.StrEnum):
    """The user's answer to a confirmation: MCP elicitation's three actions."""

    ACCEPT = "accept"
    DECLINE = "decline"
    CANCEL = "cancel"


@dataclass(frozen=True)
class Elicitation:
    """The client's answer to a form: its action and, on accept, the values entered."""

    action: Confirmation
    content: dict[str, Any] | None = None


class InputRequired(Exception):  # noqa: N818 (not an error: the call's first answer is a question)
    """Raised by a tool (or by `confirm()`) when it needs answers only a later request can bring (multi round-trip,
    protocol 2026-07-28): the call stops here, writing nothing, and the MCP server answers `input_required` with
    `requests` (key -> an input request: `elicitation_request`, `sampling_request`, `roots_request`) and `state`
    (plain text, sealed by the SDK before it leaves). The client's retry brings the answers under the same keys and
    the state back (`Interaction.input_responses()`, `Interaction.request_state()`)."""

    def __init__(self, requests: dict[str, dict[str, Any]], state: str | None = None) -> None:
        super().__init__(", ".join(requests))
        self.requests, self.state = requests, state


class ConfirmInView(InputRequired):
    """MCP Apps: the confirmation is asked by the tool's view (a card with Send / Cancel) rather than a form. The
    call ends without acting; its result hands the view `question`, `details` (what the card shows, by field) and
    `token` (sealed: the call and a nonce, ui.CardInteraction); the person's Send brings the token back through
    the tool's app-only companion tool."""

    def __init__(self, question: str, details: dict[str, Any] | None, token: str) -> None:
        super().__init__({})
        self.question, self.details, self.token = question, details, token


def elicitation_request(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A form for the user (MCP `elicitation/create`; `schema` a flat JSON Schema object)."""
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def sampling_request(prompt: str, max_tokens: int) -> dict[str, Any]:
    """A question for the client's model (MCP `sampling/createMessage`)."""
    message = {"role": "user", "content": {"type": "text", "text": prompt}}
    return {"method": "sampling/createMessage", "params": {"messages": [message], "maxTokens": max_tokens}}


def roots_request() -> dict[str, Any]:
    """The client's roots (MCP `roots/list`)."""
    return {"method": "roots/list", "params": {}}


class Interaction:
    """No client to ask: nothing to confirm with, progress goes nowhere, never cancelled."""

    def can_confirm(self) -> bool:
        return False

    def confirm(self, message: str, details: dict[str, Any] | None = None) -> Confirmation:
        """Ask the user to confirm `message`. May raise `InputRequired` (the answer comes with a retry).
        `details`: the same facts by field (`{"recipient": ..., "text": ...}`), for a view that shows them as a
        card (MCP Apps); a form shows `message` only."""
        raise RuntimeError("This call cannot ask the user; check can_confirm() first")

    def confirmed_in_view(self, token: str, tool: str) -> dict[str, Any]:
        """MCP Apps: the arguments of the `tool` call whose confirmation card the person accepted (`token`, from
        `ConfirmInView`); after it, `confirm()` accepts exactly that card's question. Only a call from a client
        that negotiated Apps can bring one."""
        raise InvalidParams("Only an MCP Apps view can send this confirmation")

    def elicit(self, message: str, schema: dict[str, Any]) -> Elicitation:
        """Ask the user to fill in a form (MCP elicitation, `schema` a flat JSON Schema object). Like `confirm`,
        only where `can_confirm()`."""
        raise RuntimeError("This call cannot ask the user; check can_confirm() first")

    def sample(self, prompt: str, max_tokens: int) -> str:
        """The client's model's answer to `prompt` (MCP sampling), where the client offers sampling; else
        RuntimeError."""
        raise RuntimeError("This call cannot ask the client's model")

    def asked(self) -> bool:
        """Whether `confirm()` gave an answer in this call (the dispatcher checks that a tool declared `confirm`
        asked whenever it could)."""
        return False

    @property
    def confirmation_key(self) -> str | None:
        """After `confirm()` answered a question that a client may present again (a retry after a lost reply): a key
        naming that one question, the same for every answer to it. A tool stores it, unique, with what it does on
        accept, so a repeat does nothing new, and a later decline of the same question finds that it was done."""
        return None

    def client_can(self, capability: str) -> bool:
        """Whether the client declared the MCP capability ("elicitation", "sampling", "roots") for this request."""
        return False

    def input_responses(self) -> dict[str, Any]:
        """The answers this request brings to an earlier `InputRequired` (multi round-trip), by key; {} for none."""
        return {}

    def request_state(self) -> str | None:
        """The state of an earlier `InputRequired` this request brings back (verified and unsealed), or None."""
        return None

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        return None

    def cancelled(self) -> bool:
        return False

    def log(self, level: str, data: object) -> None:
        """A log message for the client (MCP `notifications/message`, `level` one of RFC 5424's names: "info",
        "warning", ...), where the client asked for them; elsewhere dropped."""
        return None


NO_INTERACTION = Interaction()
