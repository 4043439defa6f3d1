"""The one path from any transport to a tool: scope, rate, validation, run, error rendering, audit.

Transports parse their wire format, build a `CallContext` and call `list_tools` / `call_tool`
(or the `a*` variants from async code, which run the ORM in a worker thread). Nothing here knows a
wire format; nothing in a transport knows a domain.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import datetime
import functools
import logging
import math
import threading
import time
import uuid
import weakref
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.conf import settings
from django.db import close_old_connections, transaction
from django.utils import timezone
from opentelemetry import context as otel_context
from opentelemetry import trace

from mcpsite.core import metrics
from mcpsite.core.db import commit_without_flush_wait, insert_rows
from mcpsite.core.errors import ApplicationError, InternalError, InvalidParams, RateLimited, ScopeDenied, UnknownTool
from mcpsite.core.jsonutil import to_jsonable
from mcpsite.core.limits import enforce_api_key_rate
from mcpsite.models import ToolCall
from mcpsite.tracing import tracer

from . import registry
from .content import Content
from .interaction import InputRequired
from .registry import CallContext, ToolSpec
from .wire import INTERNAL_ERROR, jsonrpc_code

logger = logging.getLogger("mcpsite.mcp")
# One line per tool call (LOG_FORMAT=json turns it on: settings.LOGGING).
calls_logger = logging.getLogger("mcpsite.calls")


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


def new_request_id() -> str:
    return uuid.uuid4().hex[:16]


def call_context(*, transport: str, api_key=None, protocol: str = "") -> CallContext:
    """The context of one request from `transport` (of MCP revision `protocol`): a new request id, the key and the
    key's owner."""
    owner = api_key.owner if api_key else None
    return CallContext(transport, new_request_id(), api_key=api_key, owner=owner, protocol=protocol)


def visible_groups(ctx: CallContext, groups: Iterable[str] | None) -> list[str]:
    """The groups an endpoint serves (None: all), narrowed to the key's scopes."""
    wanted = list(registry.tool_groups() if groups is None else groups)
    if ctx.api_key is None:
        return wanted
    return [g for g in wanted if ctx.api_key.allows(g)]


def list_tools(ctx: CallContext, groups: Iterable[str] | None = None) -> list[ToolSpec]:
    enforce_api_key_rate(ctx.api_key)
    return [spec for spec in registry.tools(visible_groups(ctx, groups)) if ctx.apps or not spec.app_only]


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
    if ctx.api_key is not None and not ctx.api_key.allows(spec.group):
        raise ScopeDenied.for_group(ctx.api_key, spec.group)
    return spec


def _schema_message(error) -> str:
    """A specific message that never echoes the offending value (it may be a password)."""
    expected = error.validator_value
    if error.validator == "required":
        return error.message  # names the missing property only
    if error.validator == "type":
        types = expected if isinstance(expected, list) else [expected]
        return f"must be of type {' or '.join(types)}"
    if error.validator == "enum":
        return f"must be one of {', '.join(map(str, expected))}"
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"unexpected properties: {', '.join(extra)}"
    if error.validator == "uniqueItems":
        return "items must be unique"
    readable = {
        "minimum": "must be at least", "maximum": "must be at most",
        "exclusiveMinimum": "must be greater than", "exclusiveMaximum": "must be less than",
        "minLength": "length must be at least", "maxLength": "length must be at most",
        "minItems": "must have at least this many items:", "maxItems": "must have at most this many items:",
        "pattern": "must match the pattern", "format": "must be in format",
    }  # fmt: skip
    if error.validator in readable:
        return f"{readable[error.validator]} {expected}"
    return f"fails the schema rule '{error.validator}'"


def _path_order(error) -> list[tuple[bool, int | str]]:
    # Array indexes (int) and property names (str) never compare directly.
    return [(isinstance(part, str), part) for part in error.path]


def _location(path) -> str:
    # Keys come from the caller: a lone surrogate in one would make the answer itself unencodable.
    parts = (f"[{p}]" if isinstance(p, int) else "." + p.encode(errors="backslashreplace").decode() for p in path)
    return "".join(parts).lstrip(".")


def _refuse(path, message: str):
    where = _location(path)
    return InvalidParams(f"{where}: {message}" if where else message)


def _check_values(value: Any, path: list) -> bool:
    """Refuse what JSON allows but no tool can store: NaN/Infinity, NUL and lone surrogates in strings.

    Returns whether the value holds a float (only then is the integral-float pass needed). The walk keeps no path
    (building one per value would cost more than the walk on a 10,000-point resolve_points): only a refused value
    is walked again, to name where it is.
    """
    if type(value) not in (dict, list):
        return _check_located(value, path)
    has_float = False
    pending: list[dict | list] = [value]  # containers only: a scalar is checked where it is found
    keys_seen: set[str] = set()  # objects in an array repeat their keys: each is checked once
    while pending:
        container = pending.pop()
        items: Iterable[Any]
        if type(container) is dict:
            for key in container:
                if key not in keys_seen:
                    if type(key) is not str or "\x00" in key or not (key.isascii() or _encodable(key)):
                        _locate_refusal(value, path)
                    keys_seen.add(key)
            items = container.values()
        else:
            items = container
        for item in items:
            kind = type(item)
            if kind is str:
                if "\x00" in item or not (item.isascii() or _encodable(item)):
                    _locate_refusal(value, path)
            elif kind is float:
                has_float = True
                if not math.isfinite(item):
                    _locate_refusal(value, path)
            elif kind is dict or kind is list:
                pending.append(item)
            elif kind is not int and kind is not bool and item is not None:
                has_float |= _check_located(item, path)  # not what a JSON decoder makes: the thorough walk decides
    return has_float


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _locate_refusal(value: Any, path: list) -> None:
    """Raise the refusal of the first bad value in `value`, named by its location."""
    _check_located(value, path)
    raise AssertionError("a value was refused, but the located walk found nothing to refuse")


def _check_located(value: Any, path: list) -> bool:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _refuse(path, "must be a finite number")
        return True
    if isinstance(value, str):
        _check_text(value, path)
        return False
    has_float = False
    if isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, [*path, key])
            has_float |= _check_located(item, [*path, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            has_float |= _check_located(item, [*path, index])
    return has_float


def _check_text(text: str, path: list) -> None:
    if "\x00" in text:
        raise _refuse(path, "must not contain NUL characters")
    if not (text.isascii() or _encodable(text)):
        raise _refuse(path, "must be valid Unicode (no lone surrogates)")


def _set_at(container: Any, path, value: Any) -> None:
    *parents, last = path
    for part in parents:
        container = container[part]
    container[last] = value


def validate_arguments(spec: ToolSpec, arguments: Any) -> dict[str, Any]:
    """The arguments, checked against the tool's schema; integers arrive as `int` (never `5.0`)."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidParams("Arguments must be a JSON object")
    has_float = _check_values(arguments, [])
    error = min(spec.validator.iter_errors(arguments), key=_path_order, default=None)
    if error is not None:
        raise _refuse(error.absolute_path, _schema_message(error))
    if has_float:
        for error in list(spec.strict_validator.iter_errors(arguments)):
            if error.validator == "type" and isinstance(error.instance, float) and error.instance.is_integer():
                if not error.absolute_path:
                    continue  # the arguments object itself is never a number
                _set_at(arguments, error.absolute_path, int(error.instance))
    return arguments


def call_tool(ctx: CallContext, name: Any, arguments: Any, groups: Iterable[str] | None = None) -> ToolResult:
    """Run one tool call. Raises ApplicationError for errors the transport renders as JSON-RPC errors."""
    started = time.perf_counter()
    outcome, error_code, spec_name, group = ToolCall.Outcome.OK, "", str(name)[:100], ""
    span = tracer.start_span("mcpsite.tool")  # named after the tool once it is known to be one of ours
    current = otel_context.attach(trace.set_span_in_context(span))  # the tool's queries are its children
    try:
        spec = _find(name, ctx, groups)
        group = spec.group
        span.update_name(f"tool {spec.name}")
        span.set_attributes({"mcpsite.tool": spec.name, "mcpsite.group": group, "mcpsite.transport": ctx.transport})
        limit = "api_key"  # which limit a RateLimited comes from: the key's rate, then the tool's own
        enforce_api_key_rate(ctx.api_key)
        limit = "tool"
        try:
            arguments = validate_arguments(spec, arguments)
            data = spec.func(arguments, ctx)
            if spec.confirm and ctx.interaction.can_confirm() and not ctx.interaction.asked():
                raise RuntimeError(f"{spec.name} declares confirm but finished without asking the user")
        except ApplicationError as exc:
            if spec.render_error is None:
                raise
            outcome, error_code = ToolCall.Outcome.ERROR, str(jsonrpc_code(exc))
            return ToolResult(to_jsonable(spec.render_error(exc)), is_error=True)
        if isinstance(data, Content):
            return ToolResult(to_jsonable(data.as_data()), content=data)
        meta = to_jsonable(spec.ui_meta(arguments, data)) if ctx.apps and spec.ui_meta is not None else None
        return ToolResult(to_jsonable(data), meta=meta)
    except InputRequired:
        # Not a failure: the call's answer is a question (multi round-trip), and the retry is another call.
        outcome = ToolCall.Outcome.INPUT_REQUIRED
        raise
    except RateLimited as exc:
        outcome, error_code = ToolCall.Outcome.RATE_LIMITED, str(jsonrpc_code(exc))
        metrics.rate_limited(limit)
        raise
    except ScopeDenied as exc:
        outcome, error_code = ToolCall.Outcome.DENIED, str(jsonrpc_code(exc))
        raise
    except ApplicationError as exc:
        outcome, error_code = ToolCall.Outcome.ERROR, str(jsonrpc_code(exc))
        raise
    except Exception:
        outcome, error_code = ToolCall.Outcome.INTERNAL, str(INTERNAL_ERROR)
        logger.exception("Tool %s failed (request %s)", spec_name, ctx.request_id)
        raise InternalError(data={"request_id": ctx.request_id}) from None
    finally:
        span.set_attribute("mcpsite.outcome", outcome)
        span.end()
        otel_context.detach(current)
        audit(ctx, spec_name, outcome, error_code, started, group=group)


def record_refused_call(ctx: CallContext, name: Any, error_code: str) -> None:
    """A tools/call refused before it reached `call_tool` (a requestState that failed its checks), counted against
    the key's rate and audited as any call is, so refusals are bounded and on record. RateLimited past the rate."""
    started = time.perf_counter()
    outcome = ToolCall.Outcome.ERROR
    try:
        enforce_api_key_rate(ctx.api_key)
    except RateLimited as exc:
        outcome, error_code = ToolCall.Outcome.RATE_LIMITED, str(jsonrpc_code(exc))
        metrics.rate_limited("api_key")
        raise
    finally:
        spec = registry.get(name) if isinstance(name, str) else None
        audit(ctx, str(name)[:100], outcome, error_code, started, group=spec.group if spec else "")


def audit(ctx: CallContext, tool: str, outcome: str, error_code: str, started: float, *, group: str = "") -> None:
    """Record one call of `tool` (or a resource read) of `group` ("" when the name is none of ours) that began at
    perf_counter() `started`, in the audit log and the metrics. Call it from a worker thread: it may write. Names,
    codes and timings only: arguments may hold passwords and are never stored."""
    seconds = time.perf_counter() - started
    label = tool if group else "unknown"  # a name nobody registered must not become a label value
    metrics.tool_call(
        tool=label,
        group=group or "none",
        transport=ctx.transport,
        protocol=ctx.protocol or "none",
        outcome=outcome,
        seconds=seconds,
    )
    if calls_logger.isEnabledFor(logging.INFO):
        calls_logger.info(
            "%s %s %dms",
            tool,
            outcome,
            seconds * 1000,
            extra={
                "request_id": ctx.request_id,
                "key_id": ctx.api_key.pk if ctx.api_key is not None else None,
                "user_id": ctx.owner.pk if ctx.owner is not None else None,
                "tool": label,
                "group": group or None,
                "transport": ctx.transport,
                "protocol": ctx.protocol or None,
                "outcome": outcome,
                "duration_ms": round(seconds * 1000, 1),
            },
        )
    row = AuditRow(
        created_at=timezone.now(),
        transport=ctx.transport,
        tool=tool,
        duration_ms=int(seconds * 1000),
        outcome=outcome,
        error_code=error_code,
        request_id=ctx.request_id,
        **(ctx.api_key.audit_fields() if ctx.api_key is not None else {}),
    )
    if settings.MCP_AUDIT_FLUSH_SECONDS > 0:
        audit_buffer.add(row)
    else:
        _audit_write([row])


class AuditRow(NamedTuple):
    """A ToolCall row as `audit` buffers it, by attname (a model instance per call cost more than the insert,
    bench/bench_serving.py); the credential's fields are what its `audit_fields()` gives."""

    created_at: datetime.datetime
    transport: str
    tool: str
    duration_ms: int
    outcome: str
    error_code: str
    request_id: str
    api_key_id: int | None = None
    user_id: int | None = None
    oauth_client_id: int | None = None


def _audit_write(rows: list[AuditRow]) -> None:
    try:
        with transaction.atomic():
            commit_without_flush_wait()
            insert_rows(ToolCall, AuditRow._fields, rows)
    except Exception:  # the audit must never turn a finished call into a failure
        logger.exception("Could not record %d tool call(s), e.g. request %s", len(rows), rows[0].request_id)


class AuditBuffer:
    """Audit rows of this process, written in batches by a background thread every MCP_AUDIT_FLUSH_SECONDS.

    One insert per call was a durable write on the path of every read-only call (bench/bench_serving.py). Rows
    wait here at most MCP_AUDIT_FLUSH_SECONDS, and never more than MCP_AUDIT_BUFFER_ROWS: a call that fills the
    buffer writes it before it answers. So a process killed outright (kill -9, OOM) loses at most the rows of its
    last MCP_AUDIT_FLUSH_SECONDS, and at most MCP_AUDIT_BUFFER_ROWS; a normal shutdown (SIGTERM) writes them all.
    """

    def __init__(self) -> None:
        self._rows: list[AuditRow] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, row: AuditRow) -> None:
        with self._lock:
            self._rows.append(row)
            full = len(self._rows) >= settings.MCP_AUDIT_BUFFER_ROWS
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="mcp-audit", daemon=True)
                self._thread.start()
        if full:
            self.flush()

    def pending(self) -> int:
        return len(self._rows)

    def flush(self) -> int:
        """Write every buffered row now; returns how many."""
        with self._lock:
            rows, self._rows = self._rows, []
        if rows:
            _audit_write(rows)
        return len(rows)

    def _run(self) -> None:
        while True:
            time.sleep(settings.MCP_AUDIT_FLUSH_SECONDS or 1)  # 0 (write in the call) must not spin
            close_old_connections()
            try:
                self.flush()
            finally:
                close_old_connections()


audit_buffer = AuditBuffer()
atexit.register(audit_buffer.flush)


_executors: dict[str, ThreadPoolExecutor] = {}
_executors_lock = threading.Lock()


def _executor(kind: str) -> ThreadPoolExecutor:
    """The process's worker threads for `kind`: "tool" (database work) or "upstream" (tools that wait on another
    service). Separate pools, so calls stuck on a dead upstream cannot take the threads every other call needs."""
    if (executor := _executors.get(kind)) is not None:
        return executor
    with _executors_lock:
        if kind not in _executors:
            size = settings.MCP_UPSTREAM_THREADS if kind == "upstream" else settings.MCP_TOOL_THREADS
            _executors[kind] = ThreadPoolExecutor(max_workers=size, thread_name_prefix=f"mcp-{kind}")
        return _executors[kind]


def in_worker_thread(func, kind: str = "tool"):
    busy = metrics.WORKER_THREADS_BUSY.labels(kind)

    def run(*args, **kwargs):
        busy.inc()
        close_old_connections()
        try:
            return func(*args, **kwargs)
        finally:
            close_old_connections()
            busy.dec()

    async def call(*args, **kwargs):
        # Calls from different clients run in parallel worker threads, with the caller's context variables, as
        # asgiref's sync_to_async(thread_sensitive=False) would run them without its per-call set-up on the loop.
        context = contextvars.copy_context()
        job = functools.partial(context.run, run, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(_executor(kind), job)

    return call


def stop_worker_threads() -> None:
    """End this process's worker threads (and the database connections they keep); new ones start on demand.
    For tests, where a thread's connection must not outlive the test that opened it."""
    with _executors_lock:
        executors = list(_executors.values())
        _executors.clear()
    for executor in executors:
        executor.shutdown(wait=True)


_call_in_tool_thread = in_worker_thread(call_tool)
_call_in_upstream_thread = in_worker_thread(call_tool, kind="upstream")
alist_tools = in_worker_thread(list_tools)
arecord_refused_call = in_worker_thread(record_refused_call)

# Per process and event loop: how many calls each key has in worker threads now (bounded by MCP_KEY_CONCURRENCY),
# and of those in the upstream pool (bounded by MCP_KEY_UPSTREAM_THREADS); the rest wait on the event loop,
# holding no thread.
_key_slots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_key_upstream_slots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _per_key(table: weakref.WeakKeyDictionary, api_key, size: int) -> asyncio.Semaphore | contextlib.nullcontext:
    if api_key is None:  # stdio and other trusted local callers
        return contextlib.nullcontext()
    slots = table.setdefault(asyncio.get_running_loop(), {})
    if api_key.pk not in slots:
        slots[api_key.pk] = asyncio.Semaphore(size)
    return slots[api_key.pk]


def key_slot(api_key) -> asyncio.Semaphore | contextlib.nullcontext:
    """One of the key's MCP_KEY_CONCURRENCY slots: hold it while the key's work holds a worker thread."""
    return _per_key(_key_slots, api_key, settings.MCP_KEY_CONCURRENCY)


def key_upstream_slot(api_key) -> asyncio.Semaphore | contextlib.nullcontext:
    """One of the key's MCP_KEY_UPSTREAM_THREADS slots in the upstream pool: two keys with MCP_KEY_CONCURRENCY
    calls each stuck on a dead upstream filled the whole pool, and every other tenant's geo call waited."""
    return _per_key(_key_upstream_slots, api_key, settings.MCP_KEY_UPSTREAM_THREADS)


async def acall_tool(ctx: CallContext, name: Any, arguments: Any, groups: Iterable[str] | None = None) -> ToolResult:
    """`call_tool` from async code: in the upstream pool for upstream-bound tools, else the tool pool; at most
    MCP_KEY_CONCURRENCY of one key's calls hold threads at once, MCP_KEY_UPSTREAM_THREADS of them upstream ones."""
    spec = registry.get(name) if isinstance(name, str) else None
    if spec is not None and spec.upstream:
        # The upstream share first: a call waiting for it holds none of the key's other slots.
        async with key_upstream_slot(ctx.api_key), key_slot(ctx.api_key):
            return await _call_in_upstream_thread(ctx, name, arguments, groups)
    async with key_slot(ctx.api_key):
        return await _call_in_tool_thread(ctx, name, arguments, groups)
