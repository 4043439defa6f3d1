"""Platform reads: the tool-call audit log summarised for the staff dashboard."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.db.models import Case, Count, F, IntegerField, Q, Sum, Value, When, Window
from django.db.models.functions import RowNumber

from .models import ToolCall, ToolCallOutcome

FAILED_OUTCOMES = [o for o in ToolCallOutcome.values if o != ToolCallOutcome.OK]


@dataclass(frozen=True, slots=True)
class ToolCallStats:
    key: str | int | None  # the tool name, or the API key's pk (None: calls without a key, e.g. stdio)
    calls: int
    failed: int
    p95_ms: int  # nearest-rank 95th percentile of the duration

    @property
    def failed_percent(self) -> float:
        return 100 * self.failed / self.calls if self.calls else 0.0


def tool_call_stats(*, since: datetime.datetime, by: str) -> list[ToolCallStats]:
    """Calls since `since` grouped `by` "tool" or "api_key": how many, how many failed, and the p95 duration.

    One query on every backend, and only one row per group leaves the database: window functions number each
    group's calls by duration, and the row whose number is the nearest rank ⌈0.95·n⌉ carries the p95 along with
    the group's counts (SQLite has no percentile aggregate; this is the same SQL on both). Most calls first.
    """
    if by not in {"tool", "api_key"}:
        raise ValueError(f"tool_call_stats: unknown grouping {by!r}")
    group = [F("api_key_id" if by == "api_key" else "tool")]
    failed = Case(When(Q(outcome__in=FAILED_OUTCOMES), then=Value(1)), default=Value(0), output_field=IntegerField())
    ranked = (
        ToolCall.objects.filter(created_at__gte=since)
        .order_by()  # (no sort by the model's ordering around the windows)
        .annotate(
            n=Window(Count("id"), partition_by=group),
            n_failed=Window(Sum(failed), partition_by=group),
            rank=Window(RowNumber(), partition_by=group, order_by=[F("duration_ms").asc(), F("id").asc()]),
        )
        # ⌈0.95·n⌉ in integer arithmetic, the same on SQLite and PostgreSQL.
        .filter(rank=(F("n") * 19 + 19) / 20)
        .values_list(group[0].name, "n", "n_failed", "duration_ms")
    )
    rows = [ToolCallStats(key, calls, failed, p95) for key, calls, failed, p95 in ranked]
    return sorted(rows, key=lambda row: (-row.calls, str(row.key)))
