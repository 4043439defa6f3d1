"""Logging filters that keep credentials out of log lines.

The calendar feed's URL (`/calendar/<token>.ics`) is its only credential, and every access log writes the
path: uvicorn's (`uvicorn.access`), gunicorn's (`gunicorn.access`), runserver's (`django.server`), and Django's
own warnings (`Not Found: /calendar/….ics`). The filter rewrites any path under `/calendar/` in the record before
any handler formats it.
"""

from __future__ import annotations

import logging
import re

# Everything after `/calendar/` up to the end of the path (and its query): whatever the suffix, case or spelling
# (`/calendar/<token>`, `.ICS`, `/calendar/./<token>.ics`, `%2F` for the slash), a 404 logs the token all the same.
FEED_TOKEN = re.compile(r"(/calendar(?:/|%2f))[^\s\"']+", re.IGNORECASE)
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
