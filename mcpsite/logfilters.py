"""Logging filters that keep credentials out of log lines.

The calendar feed's URL (`/calendar/<token>.ics`) is its only credential, and every access log writes the
path: uvicorn's (`uvicorn.access`), gunicorn's (`gunicorn.access`), runserver's (`django.server`), and Django's
own warnings (`Not Found: /calendar/….ics`). The filter rewrites any path under `/calendar/` in the record before
any handler formats it.
"""

from __future__ import annotations

import logging
import re

# A calendar feed's path, the one rule for what carries a feed token: `/calendar/` in any case (the URL router
# matches only the lower-case one, but a 404 logs or traces the token all the same) and with `%2F` for the slash. The
# logs redact what follows it (below); the traces leave the request out altogether (mcpsite/tracing.py). A scoped
# flag, not re.IGNORECASE, so the pattern means the same wherever it is compiled (OpenTelemetry's exclude list).
FEED_PATH = r"(?i:/calendar(?:/|%2f))"
# Everything after the feed path up to the end of the path (and its query): whatever the suffix or spelling
# (`/calendar/<token>`, `.ICS`, `/calendar/./<token>.ics`), a 404 logs the token all the same.
FEED_TOKEN = re.compile(rf"({FEED_PATH})[^\s\"']+")
REDACTED = r"\1[redacted]"
# Access loggers that servers configure with handlers of their own before Django starts; the filter is
# added to them directly, since configuring them in LOGGING would replace those handlers.
ACCESS_LOGGERS = ("uvicorn.access", "gunicorn.access", "django.server")


def redact(value):
    return FEED_TOKEN.sub(REDACTED, value) if isinstance(value, str) else value


class RedactFeedTokens(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(arg) for arg in record.args)
        elif isinstance(record.args, dict):
            record.args = {key: redact(arg) for key, arg in record.args.items()}
        return True


def install_on_access_loggers() -> None:
    """Add the filter to each access logger once (Django may be set up more than once in a process)."""
    for name in ACCESS_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactFeedTokens) for f in logger.filters):
            logger.addFilter(RedactFeedTokens())


class NoTracebackForRefusals(logging.Filter):
    """A refused page (403: a staff member without the permission) is logged as one WARNING line, without the
    traceback Django attaches: the refusal is expected, and a stack trace in the log reads as a failure."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "django.request" and getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True
