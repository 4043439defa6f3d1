"""Changelists over large tables (the tool-call log): what Django's defaults read every row for, done with a few
indexed one-row queries instead. Measured by bench/bench_staff_pages.py (docs/staff-pages.md, "Large lists")."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import models
from django.utils import formats

from .core.search import SearchQuery

# A changelist template whose date hierarchy offers the periods between the first and the last row rather than
# those with rows (mcpsite/templatetags/bounded_dates.py): no DISTINCT over the whole table.
BOUNDED_DATES_CHANGE_LIST = "admin/change_list_bounded_dates.html"

DISTINCT_VALUES_LIMIT = 200  # a filter with more choices is no use; the search box finds the rest

COUNT_CAP = 10_000  # a list counts its rows up to this many, then says "10,000+" (100 pages of 100)


class CappedCountPaginator(Paginator):
    """A changelist's paginator that counts at most COUNT_CAP + 1 rows (`COUNT(*)` over a `LIMIT`), so a list of a
    million rows, or a filter matching a third of them, costs a bounded count instead of reading every match; the
    list then says "10,000+ results" (templates/admin/pagination.html, search_form.html) and pages through the first
    10,000. A ModelAdmin opts in with `paginator = CappedCountPaginator`."""

    @cached_property
    def _counted(self) -> int:
        rows: models.QuerySet = self.object_list  # type: ignore[assignment]  # a changelist pages a queryset
        return rows.order_by().values("pk")[: COUNT_CAP + 1].count()  # no annotation computed for the count

    @property
    def count(self) -> int:
        return min(self._counted, COUNT_CAP)

    @property
    def count_capped(self) -> bool:
        """Whether there are more rows than the list counts and pages through."""
        return self._counted > COUNT_CAP

    @property
    def count_label(self) -> str:
        """The count as a person reads it: "10,000+" past the cap."""
        return f"{formats.number_format(COUNT_CAP, force_grouping=True)}+"


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


class FoldedSearchMixin:
    """A changelist whose search also finds the rows whose folded key (`folded_search_key`, a field holding
    `core.text.search_key` of a name) holds every folded term of the search: ﾃﾞﾓ, でも and デモ alike, as the staff's
    search box finds them (mcpsite/staff_search.py), so its "all found" link lists the same rows."""

    folded_search_key: str

    def get_search_results(self, request, queryset, search_term):
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)  # type: ignore[misc]
        query = SearchQuery.parse(search_term)
        if query:
            results |= queryset.filter(query.key_holds(self.folded_search_key))
        return results, may_have_duplicates
