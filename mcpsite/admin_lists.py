"""Changelists over large tables (the tool-call log): what Django's defaults read every row for, done with a few
indexed one-row queries instead. Measured by bench/bench_staff_pages.py (docs/staff-pages.md, "Large lists")."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models

# A changelist template whose date hierarchy offers the periods between the first and the last row rather than
# those with rows (mcpsite/templatetags/bounded_dates.py): no DISTINCT over the whole table.
BOUNDED_DATES_CHANGE_LIST = "admin/change_list_bounded_dates.html"

DISTINCT_VALUES_LIMIT = 200  # a filter with more choices is no use; the search box finds the rest


def distinct_values(queryset: models.QuerySet, field: str, *, limit: int = DISTINCT_VALUES_LIMIT) -> list[Any]:
    """The first `limit` distinct values of `field`, in order, each found by one query for the next value up: a
    "loose index scan", a few index probes where `SELECT DISTINCT` reads every row (PostgreSQL has no such plan).
    Needs an index led by `field`; the number of queries is the number of values plus one."""
    ordered = queryset.order_by(field).values_list(field, flat=True)
    values: list[Any] = []
    value = ordered.first()
    while value is not None and len(values) < limit:
        values.append(value)
        value = ordered.filter(**{f"{field}__gt": value}).first()
    return values


class IndexedValuesFilter(admin.SimpleListFilter):
    """Django's "all values" filter (`?<field>__exact=`) with its choices found by `distinct_values`. Subclass
    with `field_name` set, or use `indexed_values_filter`."""

    field_name: str

    def lookups(self, request, model_admin):
        return [(value, value) for value in distinct_values(model_admin.get_queryset(request), self.field_name)]

    def queryset(self, request, queryset):
        value = self.value()
        return queryset if value is None else queryset.filter(**{self.field_name: value})


def indexed_values_filter(model: type[models.Model], field_name: str) -> type[IndexedValuesFilter]:
    """An IndexedValuesFilter on `model.field_name`, titled with the field's verbose name."""
    field = model._meta.get_field(field_name)
    assert isinstance(field, models.Field), f"{model.__name__}.{field_name} is not a concrete field"
    attrs = {"field_name": field_name, "parameter_name": f"{field_name}__exact", "title": field.verbose_name}
    return type(f"{model.__name__}{field_name.title()}Filter", (IndexedValuesFilter,), attrs)
