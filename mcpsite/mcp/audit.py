"""The audit of calls: one row per tool call (or resource read, or refused call) in the ToolCall log, a metric and
an optional log line. Names, codes and timings only: arguments may hold passwords and are never stored."""

from __future__ import annotations

import atexit
import datetime
import logging
import threading
import time
from typing import NamedTuple

from django.conf import settings
from django.db import close_old_connections, transaction
from django.utils import timezone

from mcpsite.core import metrics
from mcpsite.core.db import commit_without_flush_wait, insert_rows
from mcpsite.core.outage import DEPENDENCY_ERRORS, Outage
from mcpsite.core.scopes import scope_needed
from mcpsite.models import ToolCall

from .registry import CallContext

logger = logging.getLogger("mcpsite.mcp")
# One line per tool call (LOG_FORMAT=json turns it on: settings.LOGGING).
calls_logger = logging.getLogger("mcpsite.calls")


def _storable(text: str) -> str:
    """`text` as a text column on every database holds it: PostgreSQL refuses NUL, which a caller's input may carry
    into a tool name or an error's detail (and one refused row would lose the whole batch)."""
    return text.replace("\x00", "\ufffd")


def audit(
    ctx: CallContext,
    tool: str,
    outcome: str,
    error_code: str,
    started: float,
    *,
    group: str = "",
    mode: str = "",
    error_message: str = "",
) -> None:
    """Record one call of `tool` (or a resource read) of `group` ("" when the name is none of ours) in `mode` (READ
    or WRITE, "" when unknown) that began at perf_counter() `started`, in the audit log and the metrics, with the
    scope of the credential that allowed it, or that it lacked, and what the caller was told went wrong. Call it
    from a worker thread: it may write. Names, codes, messages and timings only: arguments may hold passwords and
    are never stored."""
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
        _log_call(ctx, tool, label, group, outcome, seconds)
    row = AuditRow(
        created_at=timezone.now(),
        transport=ctx.transport,
        tool=_storable(tool),
        duration_ms=int(seconds * 1000),
        outcome=outcome,
        error_code=error_code,
        request_id=ctx.request_id,
        scope=scope_needed(ctx.api_key.scopes, group, mode) if ctx.api_key is not None and group and mode else "",
        error_message=_storable(error_message)[: ToolCall._meta.get_field("error_message").max_length],
        **(ctx.api_key.audit_fields() if ctx.api_key is not None else {}),
    )
    if settings.MCP_AUDIT_FLUSH_SECONDS > 0:
        audit_buffer.add(row)
    else:
        try:
            _audit_write([row])
        except DEPENDENCY_ERRORS:
            audit_buffer.add(row)  # written by the buffer's thread once the database answers


def _log_call(ctx: CallContext, tool: str, label: str, group: str, outcome: str, seconds: float) -> None:
    """The call's line in `mcpsite.calls` (LOG_FORMAT=json), with its fields."""
    key_id = ctx.api_key.pk if ctx.api_key is not None else None
    user_id = ctx.owner.pk if ctx.owner is not None else None
    fields = {"request_id": ctx.request_id, "key_id": key_id, "user_id": user_id, "tool": label, "group": group or None}
    fields |= {"transport": ctx.transport, "protocol": ctx.protocol or None, "outcome": outcome}
    calls_logger.info(
        "%s %s %dms", tool, outcome, seconds * 1000, extra={**fields, "duration_ms": round(seconds * 1000, 1)}
    )


class AuditRow(NamedTuple):
    """A ToolCall row as `audit` buffers it, by attname (no model instance per call: it would cost more than the
    insert); the credential's fields are what its `audit_fields()` gives."""

    created_at: datetime.datetime
    transport: str
    tool: str
    duration_ms: int
    outcome: str
    error_code: str
    request_id: str
    scope: str = ""
    error_message: str = ""
    api_key_id: int | None = None
    user_id: int | None = None
    oauth_client_id: int | None = None


def _audit_write(rows: list[AuditRow]) -> None:
    """Write `rows`; a dependency that does not answer raises (the caller keeps them), anything else is logged and
    the rows dropped: the audit must never turn a finished call into a failure."""
    try:
        with transaction.atomic():
            commit_without_flush_wait()
            insert_rows(ToolCall, AuditRow._fields, rows)
    except DEPENDENCY_ERRORS:
        raise
    except Exception:
        logger.exception("Could not record %d tool call(s), e.g. request %s", len(rows), rows[0].request_id)


class AuditBuffer:
    """Audit rows of this process, written in batches by a background thread every MCP_AUDIT_FLUSH_SECONDS.

    Batches keep a durable write off the path of every read-only call. Rows wait here at most
    MCP_AUDIT_FLUSH_SECONDS, and never more than MCP_AUDIT_BUFFER_ROWS: a call that fills the buffer writes it
    before it answers. So a process killed outright (kill -9, OOM) loses at most the rows of its last
    MCP_AUDIT_FLUSH_SECONDS, and at most MCP_AUDIT_BUFFER_ROWS; a normal shutdown (SIGTERM) writes them all.
    While the database does not answer, rows are kept and written when it does: at most MCP_AUDIT_RETAIN_ROWS, the
    oldest dropped past it (counted in mcpsite_audit_rows_dropped_total).
    """

    def __init__(self) -> None:
        self._rows: list[AuditRow] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._outage = Outage(logger, "Audit")

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
        """Write every buffered row now; returns how many were written."""
        with self._lock:
            rows, self._rows = self._rows, []
        if not rows:
            return 0
        try:
            _audit_write(rows)
        except DEPENDENCY_ERRORS as exc:
            self._keep(rows, exc)
            return 0
        self._outage.up()
        return len(rows)

    def _keep(self, rows: list[AuditRow], exc: BaseException) -> None:
        """Put unwritten rows back before those buffered since, within MCP_AUDIT_RETAIN_ROWS."""
        self._outage.down(exc)
        with self._lock:
            kept = rows + self._rows
            overflow = len(kept) - settings.MCP_AUDIT_RETAIN_ROWS
            if overflow > 0:
                kept = kept[overflow:]
                metrics.AUDIT_ROWS_DROPPED.inc(overflow)
            self._rows = kept

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
