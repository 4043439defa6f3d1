"""The one path from any transport to a tool: scope, rate, validation, run, error rendering, audit.

Transports parse their wire format, build a `CallContext` and call `list_tools` / `call_tool`
(or the `a*` variants from async code, which run the ORM in a worker thread). Nothing here knows a
wire format; nothing in a transport knows a domain.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import random
import time
from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace

from mcpsite.core import metrics
from mcpsite.core.errors import ApplicationError, InternalError, InvalidParams, RateLimited, ScopeDenied, UnknownTool
from mcpsite.core.jsonutil import to_jsonable
from mcpsite.core.limits import api_key_retry_after, over_api_key_rate
from mcpsite.models import ToolCall
from mcpsite.tracing import tracer

from . import caps, registry, threads
from .arguments import validate_arguments
from .audit import audit
from .content import Content
from .idempotency import idempotent
from .interaction import InputRequired
from .outages import unavailable
from .registry import Call, CallContext, Stage, ToolResult, ToolSpec
from .wire import INTERNAL_ERROR, jsonrpc_code

logger = logging.getLogger("mcpsite.mcp")
# One line per tool call (LOG_FORMAT=json turns it on: settings.LOGGING).
calls_logger = logging.getLogger("mcpsite.calls")


# Request ids are labels, not secrets: drawn from a generator of their own (seeded from the OS, again in each forked
# worker, and never by code that seeds the global one), not from `os.urandom`, whose system call gives the GIL up to
# a busy worker thread and leaves the event loop waiting to get it back.
_request_ids = random.Random()
os.register_at_fork(after_in_child=_request_ids.seed)


def new_request_id() -> str:
    """16 hex digits naming one request in its logs, spans and audit row."""
    return f"{_request_ids.getrandbits(64):016x}"


def call_context(*, transport: str, api_key=None, protocol: str = "") -> CallContext:
    """The context of one request from `transport` (of MCP revision `protocol`): a new request id, the key and the
    key's owner."""
    owner = api_key.owner if api_key else None
    return CallContext(transport, new_request_id(), api_key=api_key, owner=owner, protocol=protocol)


def visible_groups(ctx: CallContext, groups: Iterable[str] | None, mode: str | None = None) -> list[str]:
    """The groups an endpoint serves (None: all), narrowed to those the key's scopes allow in `mode` (None: in any
    mode)."""
    wanted = list(registry.tool_groups() if groups is None else groups)
    if ctx.api_key is None:
        return wanted
    return [g for g in wanted if ctx.api_key.allows(g, mode)]


def allowed(ctx: CallContext, spec: ToolSpec) -> bool:
    """Whether the caller's scopes allow `spec` in its mode (its annotations': read or write)."""
    return ctx.api_key is None or ctx.api_key.allows(spec.group, spec.mode)


def list_tools(ctx: CallContext, groups: Iterable[str] | None = None) -> list[ToolSpec]:
    """The tools an endpoint serving `groups` (None: all) lists to the caller: those its scopes let it call."""
    served = registry.tools(visible_groups(ctx, groups))
    return [spec for spec in served if (ctx.apps or not spec.app_only) and allowed(ctx, spec)]


def served_tool(name: str, groups: Iterable[str] | None) -> ToolSpec | None:
    """The tool called `name` on an endpoint serving `groups` (None: all), whatever the key's scopes."""
    spec = registry.get(name)
    return spec if spec is not None and (groups is None or spec.group in groups) else None


def _find(name: Any, ctx: CallContext, groups: Iterable[str] | None) -> ToolSpec:
    if not isinstance(name, str) or not name:
        raise InvalidParams("Tool name must be a non-empty string")
    spec = served_tool(name, groups)
    if spec is None or (spec.app_only and not ctx.apps):  # app-only tools exist for MCP Apps clients only
        raise UnknownTool(f"Unknown tool: {name}")
    return spec


class _Frame:
    """What the audited frame learns of a call as it runs: its tool's group and mode once found, and how it
    ended."""

    __slots__ = ("group", "mode", "outcome", "error_code", "error_message")

    def __init__(self) -> None:
        self.group, self.mode, self.error_code, self.error_message = "", "", "", ""
        self.outcome: str = ToolCall.Outcome.OK

    def ended(self, outcome: str, error: ApplicationError | None = None) -> None:
        self.outcome, self.error_code = outcome, str(jsonrpc_code(error)) if error is not None else ""
        self.error_message = str(error.detail) if error is not None else ""


@contextlib.contextmanager
def audited(ctx: CallContext, name: Any):
    """The one frame of every audited call (a tool call, a refused one): a trace span, the outcome of whatever
    escapes (an ApplicationError by its kind; anything else logged and answered as an internal error that names
    only the request id), and the audit row when it ends."""
    started = time.perf_counter()
    tool = str(name)[:100]
    frame = _Frame()
    span = tracer.start_span("mcpsite.tool")  # named after the tool once it is known to be one of ours
    current = otel_context.attach(trace.set_span_in_context(span))  # the tool's queries are its children
    try:
        yield frame
    except InputRequired:
        # Not a failure: the call's answer is a question (multi round-trip), and the retry is another call.
        frame.ended(ToolCall.Outcome.INPUT_REQUIRED)
        raise
    except RateLimited as exc:
        frame.ended(ToolCall.Outcome.RATE_LIMITED, exc)
        raise
    except ScopeDenied as exc:
        frame.ended(ToolCall.Outcome.DENIED, exc)
        raise
    except ApplicationError as exc:
        frame.ended(ToolCall.Outcome.ERROR, exc)
        raise
    except Exception as exc:
        if (refusal := unavailable(exc)) is not None:  # logged once per outage, not per call
            frame.ended(ToolCall.Outcome.INTERNAL, refusal)
            raise refusal from None
        frame.outcome, frame.error_code = ToolCall.Outcome.INTERNAL, str(INTERNAL_ERROR)
        logger.exception("Tool %s failed (request %s)", tool, ctx.request_id)
        raise InternalError(data={"request_id": ctx.request_id}) from None
    finally:
        if frame.group:
            span.update_name(f"tool {tool}")
            attributes = {"mcpsite.tool": tool, "mcpsite.group": frame.group, "mcpsite.transport": ctx.transport}
            span.set_attributes(attributes)
        span.set_attribute("mcpsite.outcome", frame.outcome)
        span.end()
        otel_context.detach(current)
        audit(
            ctx, tool, frame.outcome, frame.error_code, started,
            group=frame.group, mode=frame.mode, error_message=frame.error_message,
        )  # fmt: skip


def authorize(call: Call, call_next: Callable[[Call], ToolResult]) -> ToolResult:
    """The credential's scopes allow the tool's group in the tool's mode (403 otherwise, naming the scope needed,
    audited as denied)."""
    api_key = call.ctx.api_key
    if not allowed(call.ctx, call.spec):
        raise ScopeDenied.for_group(api_key, call.spec.group, mode=call.spec.mode)
    return call_next(call)


def validate(call: Call, call_next: Callable[[Call], ToolResult]) -> ToolResult:
    """The arguments against the tool's schema (integers as `int`)."""
    call.arguments = validate_arguments(call.spec, call.arguments)
    return call_next(call)


def in_band(call: Call, call_next: Callable[[Call], ToolResult]) -> ToolResult:
    """A seed with an in-band error shape (geo, reminders) gets the failures of its arguments and of its tool as its
    result (`render_error`); refusals before this stage (scopes) stay refusals."""
    try:
        return call_next(call)
    except ApplicationError as exc:
        if call.spec.render_error is None:
            raise
        return ToolResult(to_jsonable(call.spec.render_error(exc)), is_error=True, error=exc)


def run(call: Call) -> ToolResult:
    """The tool itself."""
    spec, ctx = call.spec, call.ctx
    data = spec.func(call.arguments, ctx)
    if spec.confirm and ctx.interaction.can_confirm() and not ctx.interaction.asked():
        raise RuntimeError(f"{spec.name} declares confirm but finished without asking the user")
    if isinstance(data, Content):
        return ToolResult(to_jsonable(data.as_data()), content=data)
    meta = to_jsonable(spec.ui_meta(call.arguments, data)) if ctx.apps and spec.ui_meta is not None else None
    return ToolResult(to_jsonable(data), meta=meta)


# The stages every tool call passes, in order, on every transport, after the request was counted (`account`) and
# its tool found; the last runs the tool. A cross-cutting concern of tool calls is one stage here
# (docs/conventions.md, "Adding a stage").
STAGES: list[Stage] = [authorize, in_band, validate, idempotent]


def _through(stages: list[Stage], call: Call) -> ToolResult:
    if not stages:
        return run(call)
    return stages[0](call, functools.partial(_through, stages[1:]))


def call_tool(ctx: CallContext, name: Any, arguments: Any, groups: Iterable[str] | None = None) -> ToolResult:
    """Run one tool call through the stages. Raises ApplicationError for errors the transport renders."""
    with audited(ctx, name) as frame:
        spec = _find(name, ctx, groups)
        frame.group, frame.mode = spec.group, spec.mode
        try:
            result = _through(STAGES, Call(ctx, spec, arguments))
        except RateLimited:
            metrics.rate_limited("tool")  # the key's rate is counted at the door: this is the tool's own
            raise
        if result.error is not None:
            frame.ended(ToolCall.Outcome.ERROR, result.error)
        return result


def account(ctx: CallContext, tool: Any = None) -> None:
    """The accounting stage: one request (or batch element) of the caller, counted once, on every transport, before
    anything else is done for it. Past the key's rate: RateLimited with the key's `Retry-After`; a refused tools/call
    (`tool`: its name) is audited as rate-limited."""
    api_key = ctx.api_key
    if api_key is None or not _over_rate(api_key):
        return
    metrics.rate_limited("api_key")
    refused = RateLimited(retry_after=api_key_retry_after(api_key))
    if tool is None:
        raise refused
    refuse_call(ctx, tool, refused)


class NotAdmitted(Exception):
    """The accounting stage refused a whole request (its key's rate, or a limiter that cannot count): the door
    answers it as a refusal, never as the result of the call it carries."""

    def __init__(self, error: ApplicationError) -> None:
        super().__init__(error.message)
        self.error = error


# Where the ingress leaves an MCP request's Admission.
SCOPE_ADMISSION = "mcpsite.admission"


@dataclasses.dataclass(eq=False)
class Admission:
    """One request's count by the accounting stage, taken exactly once: by its transport before it does anything
    else for the request, or, for a plain tools/call, first in the call's own worker thread (one hop for both)."""

    ctx: CallContext
    tool: Any = None
    taken: bool = False

    def take(self) -> None:
        """Count the request (from a worker thread); NotAdmitted when the stage refuses it."""
        if self.taken:
            return
        self.taken = True
        try:
            account(self.ctx, self.tool)
        except ApplicationError as error:
            raise NotAdmitted(error) from None

    async def atake(self) -> None:
        """`take` from async code, in a worker thread unless it is already taken."""
        if not self.taken:
            await _take_in_thread(self)


def refuse_call(ctx: CallContext, tool: Any, refusal: ApplicationError) -> None:
    """Raise `refusal` for a tools/call of `tool` refused at the door, audited as the stages' refusals are."""
    with audited(ctx, tool) as frame:
        spec = registry.get(tool) if isinstance(tool, str) else None
        frame.group, frame.mode = (spec.group, spec.mode) if spec is not None else ("", "")
        raise refusal


def authorize_at_door(ctx: CallContext, tool: Any, groups: Iterable[str] | None) -> None:
    """The `authorize` stage's rule, applied before an MCP request reaches its server, for OAuth tokens: a call of
    a served tool the token's scopes do not allow, of a group its user could grant, is refused with 403
    insufficient_scope naming the scope needed, so its client can ask the user for it (MCP step-up). API keys, and
    tokens whose user could not grant it, are refused by the stage, in the wire's shape."""
    spec = _beyond_token_scopes(ctx, tool, groups)
    if spec is not None and ctx.api_key.may_step_up(spec.group):  # type: ignore[union-attr]
        refuse_call(ctx, tool, ScopeDenied.for_group(ctx.api_key, spec.group, mode=spec.mode))


def _beyond_token_scopes(ctx: CallContext, tool: Any, groups: Iterable[str] | None) -> ToolSpec | None:
    """The served tool an OAuth token's call names, when the token's scopes do not allow it."""
    if getattr(ctx.api_key, "kind", "api_key") != "oauth" or not isinstance(tool, str):
        return None
    spec = served_tool(tool, groups)
    return spec if spec is not None and not allowed(ctx, spec) else None


def _over_rate(api_key) -> bool:
    """Count one request of the key; a limiter that cannot count (Redis or the database not answering) refuses it
    with 503: the limits fail closed (docs/production.md)."""
    try:
        return over_api_key_rate(api_key)
    except Exception as exc:
        if (refusal := unavailable(exc)) is not None:
            raise refusal from None
        raise


def record_refused_call(ctx: CallContext, name: Any, error_code: str) -> None:
    """A tools/call refused before it reached `call_tool` (a requestState that failed its checks), audited as any
    call is, so refusals are on record (the request was counted at the door)."""
    started = time.perf_counter()
    spec = registry.get(name) if isinstance(name, str) else None
    audit(ctx, str(name)[:100], ToolCall.Outcome.ERROR, error_code, started, group=spec.group if spec else "")


def _admitted_call(
    ctx: CallContext, name: Any, arguments: Any, groups: Iterable[str] | None, admission: Admission | None
) -> ToolResult:
    if admission is not None:
        admission.take()
    return call_tool(ctx, name, arguments, groups)


_call_in_tool_thread = threads.in_worker_thread(_admitted_call)
_call_in_upstream_thread = threads.in_worker_thread(_admitted_call, kind="upstream")
arecord_refused_call = threads.in_worker_thread(record_refused_call)
_take_in_thread = threads.in_worker_thread(Admission.take)
_authorize_at_door_in_thread = threads.in_worker_thread(authorize_at_door)


async def aauthorize_at_door(admission: Admission, groups: Iterable[str] | None) -> None:
    """`authorize_at_door` from async code for the admission's call, in a worker thread only for a call it may
    refuse (it reads the user's permissions and audits), once the request is counted."""
    if _beyond_token_scopes(admission.ctx, admission.tool, groups) is not None:
        await admission.atake()
        await _authorize_at_door_in_thread(admission.ctx, admission.tool, groups)


async def acall_tool(
    ctx: CallContext,
    name: Any,
    arguments: Any,
    groups: Iterable[str] | None = None,
    admission: Admission | None = None,
) -> ToolResult:
    """`call_tool` from async code: in the upstream pool for upstream-bound tools, else the tool pool; at most
    MCP_KEY_CONCURRENCY of one key's calls hold threads at once, MCP_KEY_UPSTREAM_THREADS of them upstream ones.
    `admission`: the request's count, still to take; it is taken first in the call's thread (NotAdmitted)."""
    spec = registry.get(name) if isinstance(name, str) else None
    if spec is not None and spec.upstream:
        # The upstream share first: a call waiting for it holds none of the key's other slots.
        async with caps.key_upstream_slot(ctx.api_key), caps.key_slot(ctx.api_key):
            return await _call_in_upstream_thread(ctx, name, arguments, groups, admission)
    async with caps.key_slot(ctx.api_key):
        return await _call_in_tool_thread(ctx, name, arguments, groups, admission)
