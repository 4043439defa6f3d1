"""The staff dashboard on the admin index: the blocks each app contributes, and the platform's own.

Each app names its blocks on its AppConfig (`dashboard_blocks`, dotted paths of builders, in the order they
appear), as it names its tool group and secret fields, so adding an app touches no platform file. A builder
returns its `Block` for the staff member looking, or None when that person may not see it (the view permission of
the changelists its numbers open). Every number links to the changelist (filtered) that lists the rows behind it,
and every block runs a fixed number of queries whatever the data (mcpsite/tests/test_dashboard.py counts them).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol
from urllib.parse import urlencode

from django.apps import apps
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext, ngettext

from . import selectors
from .charts import BarChart, ChartValue, hbar_chart
from .models import ApiKey

TOOL_CALL_HOURS = 24


def changelist(model: str, **params: Any) -> str:
    """The admin changelist of `model` ("app_label.model_name") filtered by `params` (changelist lookups)."""
    app_label, model_name = model.split(".")
    url = reverse(f"admin:{app_label}_{model_name}_changelist")
    return f"{url}?{urlencode(params)}" if params else url


def local_midnight(day: datetime.date) -> datetime.datetime:
    return timezone.make_aware(datetime.datetime.combine(day, datetime.time.min))


def iso(moment: datetime.datetime) -> str:
    """A changelist lookup value for a moment (local time with its offset; the admin parses it back)."""
    return timezone.localtime(moment).isoformat()


def number(value: int | Decimal) -> str:
    return formats.number_format(value, decimal_pos=0, force_grouping=True)


@dataclass(frozen=True, slots=True)
class Link:
    text: str
    href: str
    rows: int | None = None  # the changelist's row count when `text` is that count (tests follow every link)


@dataclass(frozen=True, slots=True)
class Block:
    """One section of the dashboard: `template` renders `data` (as `block.data`) inside a section with this `id`
    and `title`; a `wide` block spans the page."""

    id: str
    title: str
    template: str
    data: Any
    wide: bool = False
    heading_links: tuple[Link, ...] = ()  # beside the title, e.g. the ledger's previous and next year


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is looking, and when: what a block builder gets. `params` are the index page's query parameters."""

    user: Any
    now: datetime.datetime
    params: Mapping[str, str]

    @property
    def today(self) -> datetime.date:
        return timezone.localdate(self.now)

    def may(self, *permissions: str) -> bool:
        return all(self.user.has_perm(p) for p in permissions)


class BlockBuilder(Protocol):
    def __call__(self, viewer: Viewer) -> Block | None: ...


def daily_counts_chart(
    *,
    chart_id: str,
    title: str,
    series: str,
    today: datetime.date,
    days: int,
    counts: Callable[[datetime.datetime, datetime.datetime], Mapping[datetime.date, int]],
    model: str,
    field: str,
    lookups: Mapping[str, str] | None = None,
    counts_rows: bool = True,
) -> BarChart:
    """One count per day for the last `days` days (oldest first), each bar linking to `model`'s changelist of that
    day (`field` within the day, plus `lookups`); `counts(since, until)` answers {day: count} in one query.
    `counts_rows`: the count is the number of rows that changelist lists (not, say, units summed over them)."""
    dates = [today - datetime.timedelta(days=n) for n in range(days - 1, -1, -1)]
    by_day = counts(local_midnight(dates[0]), local_midnight(today + datetime.timedelta(days=1)))
    rows = []
    for day in dates:
        start, end = local_midnight(day), local_midnight(day + datetime.timedelta(days=1))
        value = by_day.get(day, 0)
        href = changelist(model, **(lookups or {}), **{f"{field}__gte": iso(start), f"{field}__lt": iso(end)})
        rows.append(
            (
                formats.date_format(day, "MONTH_DAY_FORMAT"),
                [ChartValue(value, number(value), href, value if counts_rows else None)],
            )
        )
    return hbar_chart(chart_id=chart_id, title=title, series=[series], rows=rows)


# --- the platform's own block: MCP tool calls, last 24 hours -------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCallLine:
    name: str  # the tool, or the API key's name
    calls: Link
    failed: Link
    failed_percent: float
    p95: Link  # the calls at or above the p95 duration


@dataclass(frozen=True, slots=True)
class ToolCallsBlock:
    hours: int
    by_tool: list[ToolCallLine]
    by_key: list[ToolCallLine]
    # Refused calls by the scope they needed (`ledger:write`): (the scope, its refusals in the changelist).
    refusals: list[tuple[str, Link]]

    @property
    def tables(self) -> list[tuple[str, list[ToolCallLine]]]:
        return [(gettext("By tool"), self.by_tool), (gettext("By API key"), self.by_key)]


def _tool_call_line(name: str, row: selectors.ToolCallStats, **lookup: Any) -> ToolCallLine:
    failed = ",".join(selectors.FAILED_OUTCOMES)
    return ToolCallLine(
        name=name,
        calls=Link(number(row.calls), changelist("mcpsite.toolcall", **lookup), row.calls),
        failed=Link(number(row.failed), changelist("mcpsite.toolcall", **lookup, outcome__in=failed), row.failed),
        failed_percent=row.failed_percent,
        p95=Link(f"{number(row.p95_ms)} ms", changelist("mcpsite.toolcall", **lookup, duration_ms__gte=row.p95_ms)),
    )


def tool_calls_block(viewer: Viewer) -> Block | None:
    if not viewer.may("mcpsite.view_toolcall"):
        return None
    # Whole seconds, so the links' lookups name exactly the moment the counts were taken from.
    since = (viewer.now - datetime.timedelta(hours=TOOL_CALL_HOURS)).replace(microsecond=0)
    window = {"created_at__gte": iso(since)}
    by_tool = [
        _tool_call_line(str(row.key), row, tool__exact=row.key, **window)
        for row in selectors.tool_call_stats(since=since, by="tool")
    ]
    keyed = selectors.tool_call_stats(since=since, by="api_key")
    names: dict[object, str] = dict(
        ApiKey.objects.filter(pk__in=[r.key for r in keyed if r.key is not None]).values_list("pk", "name")
    )
    by_key = [
        _tool_call_line(names.get(row.key, "—"), row, api_key__id__exact=row.key, **window)
        if row.key is not None
        else _tool_call_line(gettext("no key (stdio)"), row, api_key__isnull="1", **window)
        for row in keyed
    ]
    title = ngettext("MCP tool calls, last %(hours)s hour", "MCP tool calls, last %(hours)s hours", TOOL_CALL_HOURS) % {
        "hours": TOOL_CALL_HOURS
    }
    denied = {"outcome__exact": "denied", **window}
    refusals = [
        (scope, Link(number(n), changelist("mcpsite.toolcall", scope__exact=scope, **denied), n))
        for scope, n in selectors.refusals_by_scope(since=since)
    ]
    data = ToolCallsBlock(TOOL_CALL_HOURS, by_tool, by_key, refusals)
    return Block("dash-tool-calls", title, "admin/dashboard/tool_calls.html", data)


# --- the whole page ------------------------------------------------------------------------------------------


def block_builders() -> list[BlockBuilder]:
    """Every installed app's builders in INSTALLED_APPS order, then the platform's own."""
    paths = [path for config in apps.get_app_configs() for path in getattr(config, "dashboard_blocks", ())]
    return [import_string(path) for path in paths] + [tool_calls_block]


@dataclass(frozen=True, slots=True)
class Dashboard:
    blocks: list[Block]

    @property
    def empty(self) -> bool:
        return not self.blocks


def dashboard_build(*, user: Any, now: datetime.datetime, params: Mapping[str, str] | None = None) -> Dashboard:
    """The blocks `user` may see, as of `now`."""
    viewer = Viewer(user=user, now=now, params=params or {})
    return Dashboard([block for build in block_builders() if (block := build(viewer)) is not None])
