"""What one call is: who calls and how (`CallContext`), what the request said about idempotency
(`IdempotencyKey`), and what a tool answers (`ToolResult`). Every transport, stage and tool shares these; they
import nothing of the transports above them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcpsite.core.errors import ApplicationError, InvalidParams

from .content import Content
from .interaction import NO_INTERACTION, Interaction

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from mcpsite.models import ApiKey

# Where a request carries its idempotency key (docs/idempotency.md).
KEY_HEADER = "Idempotency-Key"
KEY_PARAM = "idempotencyKey"
KEY_MAX = 255


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who is calling and how. `owner` is the API key's owner (or the stdio `--user`)."""

    transport: str
    request_id: str
    api_key: ApiKey | None = None
    owner: AbstractBaseUser | None = None
    # Confirmation, progress and cancellation, where the transport and the client support them (interaction.py).
    interaction: Interaction = NO_INTERACTION
    # The MCP protocol revision of the request ("" on transports without one: /rpc, REST, WebSocket).
    protocol: str = ""
    # The MCP client negotiated MCP Apps (ui.py): tools carry their views and app-only tools exist for it.
    apps: bool = False
    # The idempotency key(s) the request carried, and whether its answer is a replay (idempotency.py).
    idempotency: IdempotencyKey | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's structured result; `is_error` for seed-shaped in-band errors (geo, reminders). `content`: the answer of
    a tool that answers with MCP content blocks (images, audio, documents); `data` is then what the transports
    without content blocks send."""

    data: dict[str, Any]
    is_error: bool = False
    content: Content | None = None
    # For an MCP Apps client: the result's `_meta` for the tool's view (ToolSpec.ui_meta).
    meta: dict[str, Any] | None = None
    # The failure an in-band error result renders (audited as an error).
    error: ApplicationError | None = None


class IdempotencyKey:
    """What a request said about idempotency: the keys it carried (header, params, `_meta`), and, once the call ran,
    whether its answer is a replay, for the door to mark. A tools/call's own keys are a child of its request's
    (`request`: a batch's calls each have theirs), and a replay marks both."""

    __slots__ = ("candidates", "replayed", "request")

    def __init__(self, *candidates: Any, request: IdempotencyKey | None = None) -> None:
        self.candidates = tuple(c for c in candidates if c is not None)
        self.replayed = False
        self.request = request

    def mark_replayed(self) -> None:
        self.replayed = True
        if self.request is not None:
            self.request.mark_replayed()

    def key(self) -> str | None:
        """The key, checked; InvalidParams for a malformed one, or two that differ."""
        values = [_unquoted(c) if isinstance(c, str) else c for c in self.candidates]
        if not values:
            return None
        if any(not isinstance(v, str) for v in values):
            raise InvalidParams(data=f"{KEY_PARAM} must be a string")
        if len(set(values)) > 1:
            raise InvalidParams(data=f"The {KEY_HEADER} header and {KEY_PARAM} differ; send one key")
        key = values[0]
        if not 1 <= len(key) <= KEY_MAX or not key.isascii() or not key.isprintable():
            raise InvalidParams(data=f"{KEY_PARAM} must be 1 to {KEY_MAX} printable ASCII characters")
        return key


def _unquoted(value: str) -> str:
    """A header value as the IETF draft writes it (a structured-field string, `"…"`) or bare, as Stripe does."""
    value = value.strip(" \t")
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
