"""Server-rendered SVG bar charts for staff pages: geometry here, markup in templates/admin/dashboard/chart.html.

No JavaScript and nothing fetched: the chart is part of the page. Charts are readable without colour: the second
series is hatched, not just a different hue, every bar carries its value as text, and every bar (with its value)
is a link to the rows behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

LABEL_WIDTH = 112  # the category labels' column
VALUE_ROOM = 104  # room right of the longest bar for its value
BAR_HEIGHT = 13
BAR_GAP = 2  # between the bars of one category
GROUP_GAP = 9  # between categories


@dataclass(frozen=True, slots=True)
class ChartValue:
    value: int | Decimal
    text: str  # the value as staff read it (grouped digits, a currency sign…)
    href: str  # the filtered changelist behind the value
    rows: int | None = None  # how many rows that changelist lists, when the value is that count


@dataclass(frozen=True, slots=True)
class Bar:
    series: int
    x: int
    y: int
    width: int
    text: str
    text_x: int
    text_y: int
    href: str
    title: str  # "category – series: value", the bar's tooltip and accessible name
    rows: int | None
    empty: bool  # a zero: shown as its value, not a link (no rows behind it, no tab stop)


@dataclass(frozen=True, slots=True)
class Label:
    text: str
    y: int


@dataclass(frozen=True, slots=True)
class BarChart:
    chart_id: str
    title: str
    width: int
    height: int
    series: list[str]
    labels: list[Label]
    bars: list[Bar]
    bar_height: int = BAR_HEIGHT
    label_width: int = LABEL_WIDTH


def hbar_chart(
    *, chart_id: str, title: str, series: list[str], rows: list[tuple[str, list[ChartValue]]], width: int = 560
) -> BarChart:
    """Grouped horizontal bars: one group per (label, values) row, one bar per series, scaled to the largest value
    (a negative value draws no bar but keeps its text)."""
    span = width - LABEL_WIDTH - VALUE_ROOM
    largest = max((max(v.value, 0) for _label, values in rows for v in values), default=0) or 1
    group_height = len(series) * (BAR_HEIGHT + BAR_GAP) - BAR_GAP
    labels, bars = [], []
    for index, (label, values) in enumerate(rows):
        top = GROUP_GAP // 2 + index * (group_height + GROUP_GAP)
        labels.append(Label(label, top + group_height // 2 + 4))
        for position, value in enumerate(values):
            y = top + position * (BAR_HEIGHT + BAR_GAP)
            length = round(span * max(value.value, 0) / largest)
            bars.append(
                Bar(
                    series=position,
                    x=LABEL_WIDTH,
                    y=y,
                    width=length,
                    text=value.text,
                    text_x=LABEL_WIDTH + length + 4,
                    text_y=y + BAR_HEIGHT - 3,
                    href=value.href,
                    title=f"{label} – {series[position]}: {value.text}",
                    rows=value.rows,
                    empty=not value.value,
                )
            )
    height = len(rows) * (group_height + GROUP_GAP)
    return BarChart(chart_id, title, width, height, series, labels, bars)
