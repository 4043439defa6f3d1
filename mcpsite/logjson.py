"""`LOG_FORMAT=json`: one JSON object a line, for log pipelines.

Every record carries time, level, logger and message, and the trace id of the span it was logged in (when tracing is
on); a tool call's line (logger `mcpsite.calls`) adds its request id, key id, tool, outcome and duration. The feed-token
filter runs before this formatter, as it does for the plain format.
"""

from __future__ import annotations

import datetime
import json
import logging

from opentelemetry import trace

# LogRecord attributes a call's line carries (mcpsite.mcp.audit.audit passes them as `extra`).
CALL_FIELDS = ("request_id", "key_id", "user_id", "tool", "group", "transport", "protocol", "outcome", "duration_ms")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            entry["trace_id"] = format(span.trace_id, "032x")
            entry["span_id"] = format(span.span_id, "016x")
        for name in CALL_FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)
