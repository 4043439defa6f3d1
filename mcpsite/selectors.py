"""Platform reads: the tool-call audit log summarised for the staff dashboard; the background processes' state."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.db.models import Case, Count, F, IntegerField, Max, Min, Q, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

from .core.db import RareAtLeast, nearest_rank_p95
from .core.search import SearchHit, SearchQuery
from .models import ApiKey, Heartbeat, ToolCall, ToolCallOutcome

NO_KEY = 0  # tool_call_stats' group of the calls without an API key
# A call answered with a question (input_required) did not fail: the user's answer comes in the next call.
FAILED_OUTCOMES = [o for o in ToolCallOutcome.values if o not in (ToolCallOutcome.OK, ToolCallOutcome.INPUT_REQUIRED)]


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

    One query, the same SQL on SQLite (which has no percentile aggregate) and PostgreSQL, and one row per group
    leaves the database: the recent calls' range is read from a covering index (ToolCall's toolcall_recent_idx),
    and running sums over counts per group find the nearest-rank p95 (mcpsite.core.db.nearest_rank_p95). Most
    calls first.
    """
    if by not in {"tool", "api_key"}:
        raise ValueError(f"tool_call_stats: unknown grouping {by!r}")
    failed = Case(When(Q(outcome__in=FAILED_OUTCOMES), then=Value(1)), default=Value(0), output_field=IntegerField())
    # A call without a key (stdio) is group 0 inside the query (no key has that primary key): the p95's steps
    # match rows to their group by equality, which NULL never meets.
    group = F("tool") if by == "tool" else Coalesce(F("api_key_id"), Value(NO_KEY))
    calls = (
        ToolCall.objects.filter(RareAtLeast(F("created_at"), since))
        .order_by()
        .values(grp=group, d=F("duration_ms"), f=failed)
    )
    rows = [
        ToolCallStats(None if by == "api_key" and grp == NO_KEY else grp, int(n), int(n_failed), int(p95))
        for grp, n, n_failed, p95 in nearest_rank_p95(calls)
    ]
    return sorted(rows, key=lambda row: (-row.calls, str(row.key)))


def refusals_by_scope(*, since: datetime.datetime) -> list[tuple[str, int]]:
    """Calls refused since `since` for want of a scope: (the scope needed, how many), most first."""
    refused = ToolCall.objects.filter(created_at__gte=since, outcome=ToolCallOutcome.DENIED).exclude(scope="")
    rows = refused.order_by().values_list("scope").annotate(n=Count("id"))
    return sorted(((scope, int(n)) for scope, n in rows), key=lambda row: (-row[1], row[0]))


@dataclass(frozen=True, slots=True)
class ProcessesOfKind:
    kind: str  # Heartbeat.Kind
    alive: int  # processes that beat within the stale bound
    last_beat_age: float | None  # seconds since the newest beat of any of them (None: none ever beat)


@dataclass(frozen=True, slots=True)
class BackgroundStatus:
    processes: list[ProcessesOfKind]
    queue_depth: int  # task rows due now and waiting for a worker
    oldest_due_age: float  # seconds the oldest of them has been due (0 when none)
    running: int  # task rows a worker holds now


def background_status(*, stale: datetime.timedelta, now: datetime.datetime | None = None) -> BackgroundStatus:
    """The task workers' and the scheduler's heartbeats and the task queue, as /readyz and /metrics report them."""
    now = now or timezone.now()
    beats = {
        row["kind"]: row
        for row in Heartbeat.objects.values("kind").annotate(
            last=Max("beat_at"), alive=Count("pk", filter=Q(beat_at__gte=now - stale))
        )
    }
    processes = [
        ProcessesOfKind(
            kind=kind,
            alive=beats[kind]["alive"] if kind in beats else 0,
            last_beat_age=(now - beats[kind]["last"]).total_seconds() if kind in beats else None,
        )
        for kind in Heartbeat.Kind.values
    ]
    # ready(): READY rows whose run_after has come, or that have none (stored as django-tasks-db's maximum date:
    # such a row has been due since it was enqueued)
    due_since = Case(When(run_after=get_date_max(), then=F("enqueued_at")), default=F("run_after"))
    due = DBTaskResult.objects.ready().aggregate(depth=Count("pk"), oldest=Min(due_since))
    oldest = due["oldest"]
    return BackgroundStatus(
        processes=processes,
        queue_depth=due["depth"],
        oldest_due_age=max((now - oldest).total_seconds(), 0.0) if oldest is not None else 0.0,
        running=DBTaskResult.objects.running().count(),
    )


# --- the staff's search (mcpsite/staff_search.py) ----------------------------------------------------------------

KEY_PREFIX_LENGTH = 10  # ApiKey.prefix: what the list shows of a key, never the rest of it


def api_key_staff_search(*, query: SearchQuery, limit: int) -> list[SearchHit]:
    """Keys whose prefix is the query, or whose name holds every folded term; newest first. Never by the key
    itself (only its digest is stored, a secret field)."""
    prefix = Q(prefix=query.text) if len(query.text) == KEY_PREFIX_LENGTH else Q(pk__in=[])
    rows = ApiKey.objects.filter(prefix | query.key_holds("name_key")).select_related("owner").order_by("-created_at")
    return [SearchHit(k.pk, k.name, f"{k.prefix}… {k.owner.get_username()}") for k in rows[:limit]]
