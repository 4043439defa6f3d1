"""`{% bounded_date_hierarchy cl %}`: the changelist's date hierarchy without a DISTINCT over the rows.

Django's `{% date_hierarchy %}` lists the years, months or days that have rows with `QuerySet.dates()` /
`datetimes()`: a DISTINCT over every row of the list (each row's date truncated in the local time zone), seconds
at a million tool calls (bench/bench_staff_pages.py). This tag offers every year, month or day between the list's
first and last row instead, found with two ordered one-row queries on the field's index (a period in between with
no rows is offered too, and opens an empty list). The links, the lookups and the template
(`admin/date_hierarchy.html`) are Django's. A ModelAdmin opts in with
`change_list_template = "admin/change_list_bounded_dates.html"`.
"""

from __future__ import annotations

import datetime
from typing import Any

from django import template
from django.contrib.admin.utils import get_fields_from_path
from django.db import models
from django.utils import formats, timezone
from django.utils.text import capfirst
from django.utils.translation import gettext

register = template.Library()


def _local_date(value: datetime.date) -> datetime.date:
    if isinstance(value, datetime.datetime):
        return (timezone.localtime(value) if timezone.is_aware(value) else value).date()
    return value


def _bounds(queryset: models.QuerySet, field: str) -> tuple[datetime.date, datetime.date] | None:
    """The local dates of the first and last row by `field` (one indexed row each), or None if there are none."""
    first, last = (queryset.order_by(order).values_list(field, flat=True).first() for order in (field, f"-{field}"))
    if first is None or last is None:
        return None
    return _local_date(first), _local_date(last)


def _months(first: datetime.date, last: datetime.date) -> list[datetime.date]:
    months, month = [], first.replace(day=1)
    while month <= last:
        months.append(month)
        month = (month + datetime.timedelta(days=32)).replace(day=1)
    return months


def _title(day: datetime.date, date_format: str) -> str:
    return capfirst(formats.date_format(day, date_format))


class _Levels:
    """The changelist's date hierarchy field, its chosen year, month and day, and the links between its levels."""

    def __init__(self, cl: Any) -> None:
        self.cl, self.name = cl, cl.date_hierarchy
        self.fields = tuple(f"{self.name}__{part}" for part in ("year", "month", "day"))
        self.year, self.month, self.day = (cl.params.get(f) for f in self.fields)

    def link(self, *values: Any) -> str:
        """The list filtered to the year, month and day given (as many as given; none: every date)."""
        return self.cl.get_query_string(dict(zip(self.fields, values, strict=False)), [f"{self.name}__"])

    def all_dates(self) -> dict[str, str]:
        return {"link": self.link(), "title": gettext("All dates")}

    def one_day(self) -> tuple[dict[str, str], list[dict[str, str]]]:
        chosen = datetime.date(int(self.year), int(self.month), int(self.day))
        back = {
            "link": self.link(self.year, self.month),
            "title": capfirst(formats.date_format(chosen, "YEAR_MONTH_FORMAT")),
        }
        return back, [{"title": capfirst(formats.date_format(chosen, "MONTH_DAY_FORMAT"))}]

    def days(self, first: datetime.date, last: datetime.date) -> tuple[dict[str, str], list[dict[str, str]]]:
        days = (first + datetime.timedelta(days=n) for n in range((last - first).days + 1))
        choices = [
            {
                "link": self.link(self.year, self.month, d.day),
                "title": capfirst(formats.date_format(d, "MONTH_DAY_FORMAT")),
            }
            for d in days
        ]
        return {"link": self.link(self.year), "title": str(self.year)}, choices

    def choices(self) -> tuple[dict[str, str] | None, list[dict[str, str]]]:
        """The link back up a level (None at the top) and the choices of the level the list is at."""
        if self.year and self.month and self.day:
            return self.one_day()
        bounds = _bounds(self.cl.queryset, self.name)  # within the chosen year or month (cl.queryset is filtered)
        if bounds is None:
            return (self.all_dates() if self.year else None), []
        first, last = bounds
        if not (self.year or self.month or self.day) and first.year == last.year:
            # As Django: a list of one year opens on it (and on its month, if only one).
            self.year = str(first.year)
            self.month = str(first.month) if first.month == last.month else None
        if self.year and self.month:
            return self.days(first, last)
        if self.year:
            return self.months(first, last)
        return None, [{"link": self.link(str(y)), "title": str(y)} for y in range(first.year, last.year + 1)]

    def months(self, first: datetime.date, last: datetime.date) -> tuple[dict[str, str], list[dict[str, str]]]:
        choices = [
            {"link": self.link(self.year, m.month), "title": _title(m, "YEAR_MONTH_FORMAT")}
            for m in _months(first, last)
        ]
        return self.all_dates(), choices


@register.inclusion_tag("admin/date_hierarchy.html")
def bounded_date_hierarchy(cl: Any) -> dict[str, Any]:
    if not cl.date_hierarchy:
        return {"show": False}
    levels = _Levels(cl)
    field = get_fields_from_path(cl.model, levels.name)[-1]
    back, choices = levels.choices()
    return {"show": True, "field_name": field.verbose_name, "back": back, "choices": choices}
