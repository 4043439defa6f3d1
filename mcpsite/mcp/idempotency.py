"""The idempotency stage: a writing tool's retry with the same key replays the first outcome, on every door.

A door puts what the request said into the call's context (`keyed`): the `Idempotency-Key` HTTP header (`/mcp`,
`/rpc`, REST), SEP-3182's `idempotencyKey` in `tools/call`'s params, or `_meta.idempotencyKey` (stdio, WebSocket,
and clients that can add only `_meta`). The stage (`idempotent`, in dispatch.STAGES) claims the key in the same
transaction as the tool's write and stores the outcome there, success or domain error, so a retry on any process
gets that outcome back (`replayed`, which the door marks: `Idempotent-Replayed: true`, `_meta` REPLAYED_META) and
the write happens once. Rules and examples: docs/idempotency.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from mcpsite.core.db import DurableHost, commit_with_flush_wait
from mcpsite.core.errors import ApplicationError, ErrorKind, IdempotencyConflict, InvalidParams
from mcpsite.idempotency import (
    arguments_digest,
    idempotency_claim,
    idempotency_release,
    idempotency_result,
    idempotency_settle,
)
from mcpsite.idempotency import principal_digest as _principal_digest
from mcpsite.models import IdempotencyRecord

from . import requeststate
from .registry import CallContext

if TYPE_CHECKING:
    from .dispatch import Call, ToolResult

KEY_HEADER = "Idempotency-Key"
KEY_PARAM = "idempotencyKey"
REPLAYED_HEADER = "Idempotent-Replayed"
REPLAYED_META = "mcpsite/idempotentReplayed"
KEY_MAX = 255

# Refusals that say when to come back are no outcome of the call: the key stays free for the retry they ask for.
NOT_OUTCOMES = {ErrorKind.RATE_LIMITED, ErrorKind.UNAVAILABLE, ErrorKind.UPSTREAM_RATE_LIMITED}

# The clock of the stage (tests move it: the expiry of a key).
now = timezone.now


class IdempotencyKey:
    """What one request said about idempotency: the keys it carried (header, params, `_meta`), and, once the call
    ran, whether its answer is a replay (for the door to mark)."""

    __slots__ = ("candidates", "replayed")

    def __init__(self, *candidates: Any) -> None:
        self.candidates = tuple(c for c in candidates if c is not None)
        self.replayed = False

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


def keyed(ctx: CallContext, *, header: str | None = None, params: Any = None) -> CallContext:
    """`ctx` with the idempotency key(s) of a request: its `Idempotency-Key` header, and a tools/call's params
    (`idempotencyKey`, `_meta.idempotencyKey`); unchanged when the request carries none."""
    found: list[Any] = [] if ctx.idempotency is None else list(ctx.idempotency.candidates)
    if header is not None:
        found.append(header)
    if isinstance(params, dict):
        meta = params.get("_meta")
        found += [params.get(KEY_PARAM), meta.get(KEY_PARAM) if isinstance(meta, dict) else None]
    keys = IdempotencyKey(*found)
    return dataclasses.replace(ctx, idempotency=keys) if keys.candidates else ctx


def replayed(ctx: CallContext) -> bool:
    """Whether the answer to this call is a replay of an earlier outcome."""
    return ctx.idempotency is not None and ctx.idempotency.replayed


def _continuation(ctx: CallContext) -> bool:
    """A multi round-trip retry (it brings answers or a state): SEP-3182 leaves these out; the key binds the
    initial request, and a confirmation's own nonce makes its answer act once (docs/idempotency.md)."""
    return ctx.interaction.request_state() is not None or bool(ctx.interaction.input_responses())


def idempotent(call: Call, call_next: Callable[[Call], ToolResult]) -> ToolResult:
    """A writing tool's retry with the same key replays the first outcome; other arguments are refused."""
    keys = call.ctx.idempotency
    if not call.spec.writes or keys is None or _continuation(call.ctx) or (key := keys.key()) is None:
        return call_next(call)
    digest = arguments_digest(tool=call.spec.name, arguments=call.arguments)
    principal = _principal_digest(requeststate.principal_of(call.ctx) or "anonymous")
    error: ApplicationError | None = None
    with DurableHost():
        record, claimed = idempotency_claim(principal=principal, tool=call.spec.name, key=key, digest=digest, now=now())
        if claimed:
            try:
                result = call_next(call)
            except ApplicationError as exc:
                error = exc
            if error is not None and error.kind in NOT_OUTCOMES:
                idempotency_release(claim=record)
            elif error is not None:
                idempotency_settle(claim=record, outcome=IdempotencyRecord.Outcome.ERROR, result=_error_fields(error))
            else:
                idempotency_settle(claim=record, outcome=IdempotencyRecord.Outcome.OK, result=_result_fields(result))
            commit_with_flush_wait()
    if error is not None:
        raise error
    if claimed:
        return result
    if record.arguments_digest != digest:
        raise IdempotencyConflict(
            data={
                "type": "idempotency_key_conflict",
                "idempotencyKey": key,
                "message": f"Idempotency key {key!r} was used for {call.spec.name} with other arguments",
            }
        )
    keys.replayed = True  # an error replayed is marked as a result is
    return _replay(record)


def _result_fields(result: ToolResult) -> dict[str, Any]:
    stored: dict[str, Any] = {"data": result.data, "is_error": result.is_error, "meta": result.meta}
    if result.error is not None:
        stored["error"] = _error_fields(result.error)
    return stored


def _error_fields(error: ApplicationError) -> dict[str, Any]:
    return {"kind": error.kind.value, "message": error.message, "data": error.data}


class ReplayedError(ApplicationError):
    """A stored domain error, raised again as the first call raised it (its kind, message and data)."""

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields["message"], fields["data"])
        self.kind = ErrorKind(fields["kind"])


def _replay(record: IdempotencyRecord) -> ToolResult:
    from .dispatch import ToolResult

    stored = idempotency_result(record=record)
    if record.outcome == IdempotencyRecord.Outcome.ERROR:
        raise ReplayedError(stored)
    error = ReplayedError(stored["error"]) if stored.get("error") else None
    return ToolResult(stored["data"], is_error=stored["is_error"], meta=stored["meta"], error=error)
