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
from collections.abc import Awaitable, Callable
from typing import Any

from django.utils import timezone

from mcpsite.core.db import hosting
from mcpsite.core.errors import ApplicationError, ErrorKind, IdempotencyConflict, InvalidRequest
from mcpsite.idempotency import (
    arguments_digest,
    idempotency_claim,
    idempotency_release,
    idempotency_result,
    idempotency_settle,
)
from mcpsite.idempotency import principal_digest as _principal_digest
from mcpsite.models import IdempotencyRecord

from . import registry, requeststate
from .context import KEY_HEADER, KEY_PARAM, IdempotencyKey
from .registry import Call, CallContext, ToolResult

REPLAYED_HEADER = "Idempotent-Replayed"
REPLAYED_META = "mcpsite/idempotentReplayed"

# SEP-3182's capability (under `tools`), a draft: docs/idempotency.md.
CAPABILITY: dict[str, Any] = {"idempotency": {}}

# Refusals that say when to come back are no outcome of the call: the key stays free for the retry they ask for.
NOT_OUTCOMES = {ErrorKind.RATE_LIMITED, ErrorKind.UNAVAILABLE, ErrorKind.UPSTREAM_RATE_LIMITED}

# The clock of the stage (tests move it: the expiry of a key).
now = timezone.now


def keyed(ctx: CallContext, *, header: str | None = None, params: Any = None) -> CallContext:
    """`ctx` with the idempotency keys of a request (its `Idempotency-Key` header) or of one tools/call in it (its
    params' `idempotencyKey` or `_meta.idempotencyKey`), added to those `ctx` already has; `replayed(ctx)` then
    says whether the answer to it was a replay."""
    found: list[Any] = [] if ctx.idempotency is None else list(ctx.idempotency.candidates)
    if header is not None:
        found.append(header)
    if isinstance(params, dict):
        meta = params.get("_meta")
        found += [params.get(KEY_PARAM), meta.get(KEY_PARAM) if isinstance(meta, dict) else None]
    return dataclasses.replace(ctx, idempotency=IdempotencyKey(*found, request=ctx.idempotency))


def header_value(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The `Idempotency-Key` of an ASGI request's headers."""
    name = KEY_HEADER.lower().encode()
    return next((value.decode("latin-1") for key, value in headers if key == name), None)


def marked_meta(ctx: CallContext, result: dict[str, Any]) -> dict[str, Any]:
    """An MCP result (or a seed JSON-RPC `tools/call` result or error object: /rpc, WebSocket) with REPLAYED_META in
    its `_meta` when it is a replay."""
    if not replayed(ctx):
        return result
    return {**result, "_meta": {**(result.get("_meta") or {}), REPLAYED_META: True}}


def batch_refusal(ctx: CallContext, tools: list[Any]) -> InvalidRequest | None:
    """The refusal of a batch whose request's one key (the `Idempotency-Key` header, /rpc) would cover more than one
    write: a key names one request, so each write of a batch takes its own (`tools`: the tool each message calls)."""
    if ctx.idempotency is None or not ctx.idempotency.candidates:
        return None
    writes = [t for t in tools if isinstance(t, str) and (spec := registry.get(t)) is not None and spec.writes]
    if len(writes) < 2:
        return None
    return InvalidRequest(
        data=f"The {KEY_HEADER} header names one request, and this batch has {len(writes)} writing calls "
        f"({', '.join(writes)}); nothing was run. Give each its own key: as tools/call with {KEY_PARAM} in its "
        f"params and no header, or as a request of its own with its own {KEY_HEADER}"
    )


def marking_replays(send: Callable[[dict[str, Any]], Awaitable[None]], request: IdempotencyKey):
    """An ASGI `send` that adds `Idempotent-Replayed: true` to a response whose call was a replay (known when the
    response starts: a tools/call's answer starts once the call ended, unless it streamed progress first)."""

    async def marked(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start" and request.replayed:
            message = {**message, "headers": [*message.get("headers", []), (b"idempotent-replayed", b"true")]}
        await send(message)

    return marked


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
    with hosting():
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
    keys.mark_replayed()  # an error replayed is marked as a result is
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
    stored = idempotency_result(record=record)
    if record.outcome == IdempotencyRecord.Outcome.ERROR:
        raise ReplayedError(stored)
    error = ReplayedError(stored["error"]) if stored.get("error") else None
    return ToolResult(stored["data"], is_error=stored["is_error"], meta=stored["meta"], error=error)


async def advertised(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """SDK server middleware: `initialize` and `server/discover` state `tools.idempotency` (SEP-3182)."""
    result = await call_next(ctx)
    if ctx.method not in ("initialize", "server/discover") or not isinstance(result, dict):
        return result
    capabilities = dict(result.get("capabilities") or {})
    if "tools" not in capabilities:
        return result
    capabilities["tools"] = {**(capabilities["tools"] or {}), **CAPABILITY}
    return {**result, "capabilities": capabilities}
