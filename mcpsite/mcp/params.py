"""Argument parsing shared by the tools; each app wraps it in its own seed's error."""

from __future__ import annotations

import datetime
import re

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class DateError(ValueError):
    """`reason` is "format" (not YYYY-MM-DD) or "calendar" (no such day, e.g. 2026-02-30)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def iso_date(value: str) -> datetime.date:
    """A strict YYYY-MM-DD calendar date (no times, no week dates, no 2026-2-3)."""
    if not _DATE.fullmatch(value):
        raise DateError("format")
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise DateError("calendar") from None
