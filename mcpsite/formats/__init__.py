"""The staff's one date and time style, per language (settings.FORMAT_MODULE_PATH): every admin page, report, print
sheet and dashboard formats dates and times through these names (`date:"DATE_FORMAT"`, `formats.date_format`,
Django's own list and form display), never with a pattern of its own. What is not defined here is Django's.

- A day (a show's date, a report's date, a list's date column): with its weekday, 2026年11月28日(土) /
  Sat, Nov 28, 2026.
- A time of day (a show's start): hours and minutes, 24-hour, no seconds: 10:00.
- A moment (booked at, posted at): the day as above and the time, 2026年11月28日(土) 09:27.
- A day within a year (the dashboard's days, a date hierarchy's): 11月28日(土) / Sat, Nov 28.
- Machine-readable values (exports' data cells, form inputs, addresses) stay ISO 8601 and are not formatted here.
"""

from __future__ import annotations

import datetime

from django.utils import formats, timezone

# A time of day in a form's input (a show's start and end): both languages, no seconds; parsed by Django's own
# TIME_INPUT_FORMATS.
TIME_INPUT_FORMAT = "%H:%M"


def day(value: datetime.date) -> str:
    """A day, with its weekday: 2026年11月28日(土)."""
    return formats.date_format(value, "DATE_FORMAT")


def time_of_day(value: datetime.time) -> str:
    """A time of day without seconds: 10:00."""
    return formats.time_format(value, "TIME_FORMAT")


def moment_in(value: datetime.datetime, zone: datetime.tzinfo) -> str:
    """A moment in a zone of its own (a reminder's: a name or a fixed offset), named when it is not the site's:
    2026年11月29日(日) 07:00 (America/New_York)."""
    local = timezone.localtime(value, zone)
    text = formats.date_format(local, "DATETIME_FORMAT")
    return text if str(zone) == str(timezone.get_default_timezone()) else f"{text} ({zone})"
