"""Times and recurrences: ISO 8601 input, the zone it was written in, and RFC 5545 rules.

A time with an offset keeps that offset; a time without one is read in `TIME_ZONE`. Repeats are
expanded in the zone the first time was written in, so "daily at 07:00" stays 07:00 on the wall
clock of a named zone across DST changes (a fixed offset has no DST to follow).
"""

from __future__ import annotations

import datetime
import re

from dateutil import rrule as du_rrule
from django.conf import settings
from django.utils import timezone

from mcpsite.mcp.errors import InvalidParams

from .models import zone_for

# The friendly words the tool accepts, as RFC 5545 rules.
REPEAT_WORDS = {
    "daily": "FREQ=DAILY",
    "weekly": "FREQ=WEEKLY",
    "weekdays": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
    "monthly": "FREQ=MONTHLY",
}
# More often than hourly is noise for a person, and a cheap way to flood a mailbox.
FORBIDDEN_FREQS = {"SECONDLY", "MINUTELY"}
# Beyond these a UTC conversion can overflow datetime, and no reminder needs them.
YEARS = (1900, 2999)
_HAS_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


def offset_name(value: datetime.datetime) -> str:
    """'+09:00' for an aware datetime's UTC offset (seconds are not kept: ISO offsets are minutes)."""
    total = int(value.utcoffset().total_seconds()) // 60
    sign = "-" if total < 0 else "+"
    hours, minutes = divmod(abs(total), 60)
    return f"{sign}{hours:02d}:{minutes:02d}"


def parse_when(value: str, *, field: str) -> tuple[datetime.datetime, str]:
    """Parse an ISO 8601 date-time -> (aware datetime, the zone name to keep with it).

    With an offset (or Z) the offset is kept; without one the time is read in TIME_ZONE.
    """
    text = value.strip()
    if not _HAS_TIME.match(text):
        raise InvalidParams(
            f"{field} must be an ISO 8601 date-time with a time of day, e.g. 2025-09-19T07:00:00+09:00 (got {value!r})"
        )
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise InvalidParams(
            f"{field} is not a valid ISO 8601 date-time: {value!r} (expected e.g. 2025-09-19T07:00:00+09:00)"
        ) from None
    if not YEARS[0] <= parsed.year <= YEARS[1]:
        raise InvalidParams(f"{field} must be between the years {YEARS[0]} and {YEARS[1]} (got {value!r})")
    if parsed.tzinfo is None:
        zone_name = settings.TIME_ZONE
        parsed = timezone.make_aware(parsed, zone_for(zone_name))
    else:
        zone_name = offset_name(parsed)
        parsed = parsed.astimezone(zone_for(zone_name))
    return parsed, zone_name


def parse_repeat(repeat: str, *, first: datetime.datetime) -> str:
    """`repeat` (a word or RRULE text) -> the normalised rule text; InvalidParams naming the problem."""
    text = repeat.strip()
    if not text:
        raise InvalidParams("repeat must not be empty: use daily, weekly, weekdays, monthly or RRULE text")
    word = REPEAT_WORDS.get(text.lower())
    rule_text = word or re.sub(r"^RRULE:", "", text, flags=re.IGNORECASE).upper()
    if "DTSTART" in rule_text or "\n" in rule_text:
        raise InvalidParams("repeat must be a single RRULE without DTSTART: the start is the reminder's time")
    if not rule_text.startswith("FREQ=") and ";FREQ=" not in rule_text:
        raise InvalidParams(
            f"repeat {repeat!r} is not understood: use daily, weekly, weekdays, monthly "
            "or RFC 5545 RRULE text such as FREQ=WEEKLY;BYDAY=MO,WE"
        )
    freq = re.search(r"FREQ=([A-Z]+)", rule_text)
    if freq and freq.group(1) in FORBIDDEN_FREQS:
        raise InvalidParams(f"repeat FREQ={freq.group(1)} is too frequent: the shortest supported repeat is HOURLY")
    try:
        rule = build_rule(rule_text, first=first)
    except (ValueError, TypeError, KeyError) as exc:
        raise InvalidParams(f"repeat is not a valid RRULE ({rule_text}): {exc}") from None
    if rule.after(first, inc=True) is None:
        raise InvalidParams(f"repeat {repeat!r} has no occurrence at or after {first.isoformat()}")
    return rule_text


def build_rule(rule_text: str, *, first: datetime.datetime) -> du_rrule.rrule:
    rule = du_rrule.rrulestr(rule_text, dtstart=first, forceset=False, ignoretz=False)
    if not isinstance(rule, du_rrule.rrule):
        raise ValueError("only one RRULE is supported")
    return rule


def next_occurrence(
    *, rule_text: str, first: datetime.datetime, zone: datetime.tzinfo, after: datetime.datetime
) -> datetime.datetime | None:
    """The rule's first occurrence strictly after `after`, or None when the rule has ended."""
    rule = build_rule(rule_text, first=first.astimezone(zone))
    found = rule.after(after.astimezone(zone), inc=False)
    return found
