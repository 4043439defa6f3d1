"""Times and recurrences: ISO 8601 input, the zone it was written in, and RFC 5545 rules.

A time with an offset keeps that offset; a time without one is read in `TIME_ZONE`. Repeats are
expanded in the zone the first time was written in, so "daily at 07:00" stays 07:00 on the wall
clock of a named zone across DST changes (a fixed offset has no DST to follow).
"""

from __future__ import annotations

import datetime
import itertools
import re
import unicodedata

from dateutil import rrule as du_rrule
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from mcpsite.core.errors import InvalidParams

from .models import zone_for

# The friendly words the tool accepts, as RFC 5545 rules.
REPEAT_WORDS = {
    "hourly": "FREQ=HOURLY",
    "daily": "FREQ=DAILY",
    "weekly": "FREQ=WEEKLY",
    "weekdays": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
    "monthly": "FREQ=MONTHLY",
    "yearly": "FREQ=YEARLY",
}
# The words a Japanese speaker says for the same repeats; 毎週月曜 (also 毎週月曜日, 毎週月) and the other weekdays.
_JA_WEEKDAYS = {"月": "MO", "火": "TU", "水": "WE", "木": "TH", "金": "FR", "土": "SA", "日": "SU"}
JA_REPEAT_WORDS = {
    "毎時": REPEAT_WORDS["hourly"],
    "毎日": REPEAT_WORDS["daily"],
    "毎週": REPEAT_WORDS["weekly"],
    "平日": REPEAT_WORDS["weekdays"],
    "毎月": REPEAT_WORDS["monthly"],
    "毎年": REPEAT_WORDS["yearly"],
    **{
        f"毎週{day}{suffix}": f"FREQ=WEEKLY;BYDAY={code}"
        for day, code in _JA_WEEKDAYS.items()
        for suffix in ("", "曜", "曜日")
    },
}
_ALL_REPEAT_WORDS = {**REPEAT_WORDS, **JA_REPEAT_WORDS}
# "hourly, daily, …, yearly, 毎時, 毎日, …", for messages and descriptions.
REPEAT_WORDS_TEXT = ", ".join([*REPEAT_WORDS, "毎時", "毎日", "毎週", "毎週月曜 (… 毎週日曜)", "平日", "毎月", "毎年"])
# More often than hourly is noise for a person, and a cheap way to flood a mailbox.
FORBIDDEN_FREQS = {"SECONDLY", "MINUTELY"}
# Beyond these a UTC conversion can overflow datetime, and no reminder needs them.
YEARS = (1900, 2999)
# dateutil loops for ever on INTERVAL=0 and fails on negative ones; no reminder needs more than this.
MAX_INTERVAL = 1000
# dateutil searches up to the year 9999 for a rule whose filters match nothing (FREQ=MONTHLY;BYMONTH=2;
# BYMONTHDAY=30: a second of CPU per call, minutes with BYSETPOS on an hourly rule), so a rule's first
# occurrence is looked for one period at a time, within this horizon only.
FIRST_DAY_HORIZON = datetime.timedelta(days=366 * 10)
# An INTERVAL that skips one period per step makes dateutil leave it at once (the next one is past year 9999).
_ONE_PERIOD = {"YEARLY": 10_000, "MONTHLY": 12 * 10_000}
_DAY_PARTS = ("BYMONTH", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYEASTER")
_ALL_WEEKDAYS = "MO,TU,WE,TH,FR,SA,SU"
# A date and a time of day to the minute, in ISO 8601's extended (2025-09-19T07:00) or basic (20250919T0700) format.
_HAS_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\d{8}T\d{4})")
ACCEPTED_FORMS = "2025-09-19T07:00:00+09:00, 2025-09-19T07:00 or 20250919T070000+0900"


def offset_name(value: datetime.datetime) -> str:
    """'+09:00' for an aware datetime's UTC offset (seconds are not kept: ISO offsets are minutes)."""
    offset = value.utcoffset()
    if offset is None:
        raise ValueError("offset_name needs an aware datetime")
    total = int(offset.total_seconds()) // 60
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
            f"{field} must be an ISO 8601 date-time with a time of day, e.g. {ACCEPTED_FORMS} (got '{value}')"
        )
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise InvalidParams(
            f"{field} is not a valid ISO 8601 date-time: '{value}' (expected e.g. {ACCEPTED_FORMS})"
        ) from None
    if not YEARS[0] <= parsed.year <= YEARS[1]:
        raise InvalidParams(f"{field} must be between the years {YEARS[0]} and {YEARS[1]} (got '{value}')")
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
        raise InvalidParams(f"repeat must not be empty: use {REPEAT_WORDS_TEXT} or RRULE text")
    # Width, case and spaces do not change a word: 'Daily', '毎週　月曜日' and '毎週月曜日' are read alike.
    word = _ALL_REPEAT_WORDS.get("".join(unicodedata.normalize("NFKC", text).lower().split()))
    rule_text = word or re.sub(r"^RRULE:", "", text, flags=re.IGNORECASE).upper()
    if "DTSTART" in rule_text or "\n" in rule_text:
        raise InvalidParams("repeat must be a single RRULE without DTSTART: the start is the reminder's time")
    if not rule_text.startswith("FREQ=") and ";FREQ=" not in rule_text:
        raise InvalidParams(
            f"repeat '{repeat}' is not understood: use {REPEAT_WORDS_TEXT} "
            "or RFC 5545 RRULE text such as FREQ=WEEKLY;BYDAY=MO,WE"
        )
    parts = _rule_parts(rule_text)
    freq = parts.get("FREQ", "")
    if freq in FORBIDDEN_FREQS:
        raise InvalidParams(f"repeat FREQ={freq} is too frequent: the shortest supported repeat is HOURLY")
    _check_bounded(parts)
    try:
        if freq in _ONE_PERIOD:
            found = first_within_horizon(parts, first=first)
        else:
            if any(name in parts for name in (*_DAY_PARTS, "BYDAY")):
                _check_days_exist(parts, first=first)
            # Bounded: every day is visited (see _check_bounded), and a matching one is within the horizon.
            found = build_rule(rule_text, first=first).after(first, inc=True)
    except (ValueError, TypeError, KeyError) as exc:
        raise InvalidParams(f"repeat is not a valid RRULE ({rule_text}): {exc}") from None
    if found is None:
        raise InvalidParams(
            f"repeat '{repeat}' has no occurrence within {FIRST_DAY_HORIZON.days // 366} years "
            f"at or after {first.isoformat()}"
        )
    return rule_text


def _rule_parts(rule_text: str) -> dict[str, str]:
    """NAME -> value of an RRULE; a name given twice is refused (dateutil would keep the last one)."""
    parts: dict[str, str] = {}
    for pair in rule_text.split(";"):
        name, has_value, value = pair.partition("=")
        if not has_value:
            continue  # malformed: dateutil refuses it with its own message
        if name in parts:
            raise InvalidParams(f"repeat names {name} more than once")
        parts[name] = value
    return parts


def _check_bounded(parts: dict[str, str]) -> None:
    """Refuse rules that would fire more often than hourly or make dateutil loop for ever."""
    interval = parts.get("INTERVAL")
    if interval is not None and not (interval.isdigit() and 1 <= int(interval) <= MAX_INTERVAL):
        raise InvalidParams(f"repeat INTERVAL must be a whole number from 1 to {MAX_INTERVAL}")
    for name in ("BYMINUTE", "BYSECOND"):
        if "," in parts.get(name, ""):
            raise InvalidParams(f"repeat {name} may have one value only: the shortest supported repeat is HOURLY")
    if "BYSETPOS" in parts and parts.get("FREQ") not in {"MONTHLY", "YEARLY"}:
        raise InvalidParams("repeat BYSETPOS is supported with FREQ=MONTHLY or FREQ=YEARLY only")
    # With a step over 1, an hourly/daily rule can visit only some weekdays or days (FREQ=DAILY;INTERVAL=7;
    # BYDAY=TU from a Friday never fires) and a weekly one only some weeks; dateutil would search to the year
    # 9999. Every other week on chosen weekdays (FREQ=WEEKLY;INTERVAL=2;BYDAY=MO) is fine: each week has them all.
    stepped_filters = {"HOURLY": (*_DAY_PARTS, "BYDAY"), "DAILY": (*_DAY_PARTS, "BYDAY"), "WEEKLY": _DAY_PARTS}
    filters = [name for name in stepped_filters.get(parts.get("FREQ") or "", ()) if name in parts]
    if interval not in {None, "1"} and filters:
        raise InvalidParams(
            f"repeat INTERVAL with {', '.join(filters)} is supported with FREQ=MONTHLY or FREQ=YEARLY only"
        )


def _check_days_exist(parts: dict[str, str], *, first: datetime.datetime) -> None:
    """Refuse an hourly/daily/weekly rule whose day filters match no day within FIRST_DAY_HORIZON.

    The same filters on a yearly rule select the same days (dateutil ignores BYDAY ordinals
    below MONTHLY), and a yearly search costs one step per year instead of one per day or hour.
    """
    days = {name: parts[name] for name in _DAY_PARTS if name in parts}
    days["BYDAY"] = re.sub(r"[+-]?\d+", "", parts.get("BYDAY", "")) or _ALL_WEEKDAYS
    found = first_within_horizon({"FREQ": "YEARLY", **days}, first=first)
    if found is None or found - first > FIRST_DAY_HORIZON:
        raise InvalidParams(
            f"repeat matches no day within {FIRST_DAY_HORIZON.days // 366} years of {first.date().isoformat()}"
        )


def first_within_horizon(parts: dict[str, str], *, first: datetime.datetime) -> datetime.datetime | None:
    """The first occurrence at or after `first` of a MONTHLY or YEARLY rule, or None when there is none in the
    periods (months or years) that start within FIRST_DAY_HORIZON.

    dateutil is asked about one period at a time, so the work is bounded by the horizon whatever the filters
    (at most 120 monthly or 10 yearly periods), where its own search runs to the year 9999.
    """
    freq, interval = parts["FREQ"], int(parts.get("INTERVAL", "1"))
    rule = build_rule(_rule_text(_with_start_defaults(parts, first=first)), first=first)
    start_month = first.year * 12 + first.month - 1
    end = first + FIRST_DAY_HORIZON
    for period in itertools.count():
        if period == 0:
            start = first
        elif freq == "YEARLY":
            start = first.replace(year=first.year + period * interval, month=1, day=1, hour=0, minute=0, second=0)
        else:
            year, month = divmod(start_month + period * interval, 12)
            start = first.replace(year=year, month=month + 1, day=1, hour=0, minute=0, second=0)
        if start > end:
            return None
        found = rule.replace(dtstart=start, interval=_ONE_PERIOD[freq]).after(start, inc=True)
        if found is not None:
            return found
    return None  # unreachable: the loop returns once past the horizon


def _with_start_defaults(parts: dict[str, str], *, first: datetime.datetime) -> dict[str, str]:
    """The parts dateutil would take from the start (the day, month and time of `first`) written out, so the
    rule means the same when a period is searched from another start."""
    parts = dict(parts)
    if not any(name in parts for name in ("BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY", "BYEASTER")):
        if parts["FREQ"] == "YEARLY":
            parts.setdefault("BYMONTH", str(first.month))
        parts["BYMONTHDAY"] = str(first.day)
    parts.setdefault("BYHOUR", str(first.hour))
    parts.setdefault("BYMINUTE", str(first.minute))
    parts.setdefault("BYSECOND", str(first.second))
    return parts


def _rule_text(parts: dict[str, str]) -> str:
    return ";".join(f"{name}={value}" for name, value in parts.items())


def build_rule(rule_text: str, *, first: datetime.datetime) -> du_rrule.rrule:
    rule = du_rrule.rrulestr(rule_text, dtstart=first, forceset=False, ignoretz=False)
    if not isinstance(rule, du_rrule.rrule):
        raise ValueError("only one RRULE is supported")
    return rule


def next_occurrence(
    *, rule_text: str, first: datetime.datetime, zone: datetime.tzinfo, after: datetime.datetime
) -> datetime.datetime | None:
    """The rule's first occurrence strictly after `after`, or None when the rule has ended.

    A rule stored by parse_repeat visits every day it filters on and fires within FIRST_DAY_HORIZON, and the
    calendar repeats every 400 years, so its next occurrence (or the one past COUNT/UNTIL that ends it) is a
    bounded number of periods away: this search cannot run to the year 9999.
    """
    rule = build_rule(rule_text, first=first.astimezone(zone))
    found = rule.after(after.astimezone(zone), inc=False)
    return found


# --- the rule in the staff's words (the admin) --------------------------------------------------------------

_WEEKDAYS = {
    "MO": gettext_lazy("Mon"),
    "TU": gettext_lazy("Tue"),
    "WE": gettext_lazy("Wed"),
    "TH": gettext_lazy("Thu"),
    "FR": gettext_lazy("Fri"),
    "SA": gettext_lazy("Sat"),
    "SU": gettext_lazy("Sun"),
}


def _every(freq: str, n: int) -> str | None:
    if freq == "HOURLY":
        return gettext("Every hour") if n == 1 else gettext("Every %(n)d hours") % {"n": n}
    if freq == "DAILY":
        return gettext("Every day") if n == 1 else gettext("Every %(n)d days") % {"n": n}
    if freq == "WEEKLY":
        return gettext("Every week") if n == 1 else gettext("Every %(n)d weeks") % {"n": n}
    if freq == "MONTHLY":
        return gettext("Every month") if n == 1 else gettext("Every %(n)d months") % {"n": n}
    if freq == "YEARLY":
        return gettext("Every year") if n == 1 else gettext("Every %(n)d years") % {"n": n}
    return None


def describe_rule(rule: str) -> str:
    """An RFC 5545 rule in the staff's language ("Every week on Mon, Thu"); a rule with parts beyond FREQ,
    INTERVAL, BYDAY (plain weekdays), BYMONTHDAY, COUNT and UNTIL is shown as written, marked as such."""
    if not rule:
        return gettext("Once")
    parts = dict(part.split("=", 1) for part in rule.split(";") if "=" in part)
    described = _every(parts.pop("FREQ", ""), int(parts.pop("INTERVAL", "1") or 1))
    days = parts.pop("BYDAY", "")
    month_day = parts.pop("BYMONTHDAY", "")
    count = parts.pop("COUNT", "")
    until = parts.pop("UNTIL", "")
    if described is None or parts or any(day not in _WEEKDAYS for day in filter(None, days.split(","))):
        return gettext("Custom rule: %(rule)s") % {"rule": rule}
    if days:
        described = gettext("%(every)s on %(days)s") % {
            "every": described,
            "days": gettext(", ").join(str(_WEEKDAYS[day]) for day in days.split(",")),
        }
    if month_day == "-1":
        described = gettext("%(every)s on the last day") % {"every": described}
    elif month_day:
        described = gettext("%(every)s on day %(days)s") % {"every": described, "days": month_day}
    if count.isdigit():
        described = gettext("%(rule)s, %(n)d times") % {"rule": described, "n": int(count)}
    if until:
        described = gettext("%(rule)s, until %(date)s") % {
            "rule": described,
            "date": f"{until[:4]}-{until[4:6]}-{until[6:8]}",
        }
    return described
