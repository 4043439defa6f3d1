"""Days on changelists: a list of shows opens on today's and the coming ones rather than on the oldest (page 1 of
years of history), the past one click away; and a dated list can be cut to a range of days (from, to)."""

from __future__ import annotations

import datetime

from django.contrib import admin
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

UPCOMING, TODAY, PAST, ALL = "upcoming", "today", "past", "all"


class OpensAtTodayFilter(admin.SimpleListFilter):
    """A day filter whose default (no parameter) is "today and later". It steps aside when the address already
    chooses days some other way (the date hierarchy, a date filter, a drill-down's range) or searches, so a past
    show's link or a search by number still finds it. Subclass with `field_name`, or use `opens_at_today`."""

    parameter_name = "day"
    field_name: str

    def lookups(self, request, model_admin):
        return [(UPCOMING, _("Today and later")), (TODAY, _("Today")), (PAST, _("Past")), (ALL, _("All days"))]

    def chosen(self, request) -> str:
        """The choice in force: the parameter's, else the default unless the address picks days or searches."""
        value = self.value()
        if value in {UPCOMING, TODAY, PAST, ALL}:
            return value
        prefix = f"{self.field_name}__"
        picks_days = any(key.startswith(prefix) for key in request.GET)
        return ALL if picks_days or request.GET.get("q", "").strip() else UPCOMING

    def queryset(self, request, queryset):
        today = timezone.localdate()
        return {
            UPCOMING: lambda: queryset.filter(**{f"{self.field_name}__gte": today}),
            TODAY: lambda: queryset.filter(**{self.field_name: today}),
            PAST: lambda: queryset.filter(**{f"{self.field_name}__lt": today}),
            ALL: lambda: queryset,
        }[self._chosen]()

    def has_output(self) -> bool:
        return True

    def choices(self, changelist):
        # Django's first entry ("All", without the parameter) would be the default here: each choice names itself.
        for value, title in self.lookup_choices:
            yield {
                "selected": self._chosen == value,
                "query_string": changelist.get_query_string({self.parameter_name: value}),
                "display": title,
            }

    def __init__(self, request, params, model, model_admin):
        super().__init__(request, params, model, model_admin)
        self._chosen = self.chosen(request)


def opens_at_today(field_name: str, title) -> type[OpensAtTodayFilter]:
    """An OpensAtTodayFilter on the date field `field_name` (a lookup path: `schedule__date`)."""
    return type("OpensAtTodayFilter", (OpensAtTodayFilter,), {"field_name": field_name, "title": title})


class DateRangeFilter(admin.FieldListFilter):
    """From one day to another, both included (`?<field>__from=2026-11-01&<field>__to=2026-11-30`; either may be
    left out), in the site's time zone. A date-and-time field is compared with the range's first and last
    instants, so its index serves the range. A value that is not a day is the admin's 400 page for a bad value in
    the address (mcpsite.admin_pages.AdminAddressValueMiddleware), never a 500."""

    template = "admin/date_range_filter.html"

    def __init__(self, field, request, params, model, model_admin, field_path):
        self.parameter_from, self.parameter_to = f"{field_path}__from", f"{field_path}__to"
        super().__init__(field, request, params, model, model_admin, field_path)
        self.value_from = self._day(self.parameter_from)
        self.value_to = self._day(self.parameter_to)
        self.other_parameters = [
            (key, value)
            for key, values in request.GET.lists()
            if key not in {self.parameter_from, self.parameter_to, "p"}
            for value in values
        ]

    def _day(self, name: str) -> datetime.date | None:
        values = self.used_parameters.get(name)  # taken from the address by FieldListFilter
        raw = str((values[-1] if isinstance(values, list) and values else values) or "").strip()
        if not raw:
            return None
        try:
            day = datetime.date.fromisoformat(raw)
        except ValueError:
            day = None
        # The first and last days are refused too: their bounds in UTC (or the day after) fall outside the calendar.
        if day is None or not datetime.date.min < day < datetime.date.max:
            raise ValueError(f"not a day: {raw!r}")
        return day

    def expected_parameters(self):
        return [self.parameter_from, self.parameter_to]

    def has_output(self) -> bool:
        return True

    def _bound(self, day: datetime.date):
        if isinstance(self.field, models.DateTimeField):
            return timezone.make_aware(datetime.datetime.combine(day, datetime.time.min))
        return day

    def queryset(self, request, queryset):
        if self.value_from is not None:
            queryset = queryset.filter(**{f"{self.field_path}__gte": self._bound(self.value_from)})
        if self.value_to is not None:
            queryset = queryset.filter(**{f"{self.field_path}__lt": self._bound(self.value_to + datetime.timedelta(1))})
        return queryset

    def choices(self, changelist):
        yield {
            "parameter_from": self.parameter_from,
            "parameter_to": self.parameter_to,
            "value_from": self.value_from.isoformat() if self.value_from else "",
            "value_to": self.value_to.isoformat() if self.value_to else "",
            "other_parameters": self.other_parameters,
            "clear_query_string": changelist.get_query_string(remove=[self.parameter_from, self.parameter_to]),
            "selected": self.value_from is not None or self.value_to is not None,
        }


def date_range(field_path: str) -> tuple[str, type[DateRangeFilter]]:
    """A list_filter entry: the range filter on `field_path`."""
    return (field_path, DateRangeFilter)
