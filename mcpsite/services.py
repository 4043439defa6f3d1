"""Platform writes: API keys, the audit log's pruning, and the background processes' heartbeats and lost tasks."""

from __future__ import annotations

import datetime
import hashlib
import logging
import secrets
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from mcpsite.core.db import durable

from .core.scopes import scopes_compact, scopes_validate, tool_groups
from .models import ApiKey, Heartbeat, ToolCall

if TYPE_CHECKING:
    from django.contrib.auth.models import User


logger = logging.getLogger("mcpsite")

# A background process beats every HEARTBEAT_SECONDS (the task worker) or every tick (the scheduler, 30 s by
# default); one silent for HEARTBEAT_STALE is taken for dead: its RUNNING task rows are queued again, and /readyz and
# /metrics report it stale.
HEARTBEAT_SECONDS = 10.0
HEARTBEAT_STALE = timedelta(seconds=90)
HEARTBEAT_FORGET = timedelta(days=1)  # rows of processes silent this long are deleted


class ScopeError(ValueError):
    pass


def scopes_parse(*, text: str) -> list[str]:
    """`cinema,ledger:read` or `all` -> a validated, compacted list of scopes (a group, or `<group>:read` /
    `<group>:write`)."""
    if text.strip() in {"all", "*"}:
        return list(tool_groups())
    scopes = [s.strip() for s in text.split(",") if s.strip()]
    try:
        scopes = scopes_validate(scopes)
    except ValueError as exc:
        raise ScopeError(str(exc)) from None
    if not scopes:
        raise ScopeError("At least one scope is required")
    return scopes_compact(scopes)


def api_key_create(*, name: str, owner: User | None, scopes: list[str], rate: str | None = None) -> tuple[ApiKey, str]:
    """Create a key; returns the record and the raw key, which is shown once and never stored."""
    api_key = ApiKey(name=name, owner=owner, scopes=list(scopes), rate=rate or settings.MCP_DEFAULT_RATE)
    raw_key = api_key.set_new_key()
    with transaction.atomic():
        api_key.full_clean(exclude=["digest"])
        api_key.save()
    return api_key, raw_key


# How long a new key waits, sealed, for its one showing (the redirect after the admin's POST).
NEW_KEY_HOLD_SECONDS = 300


def _new_key_pad(token: str, length: int) -> bytes:
    return hashlib.shake_256(f"mcpsite.new-key:{token}".encode()).digest(length)


def _new_key_slot(token: str, user_pk: int) -> str:
    return "mcpsite:new-key:" + hashlib.sha256(f"{user_pk}:{token}".encode()).hexdigest()


def api_key_hold_for_showing(*, raw_key: str, user_pk: int) -> str:
    """Keep a new key for one showing to the staff member who made it; returns the token the showing needs.

    The shared cache (every process sees it) holds the key sealed with a one-time pad derived from the token, which
    only the redirect's URL carries: neither the cache nor a cookie or the session ever holds the key in clear."""
    token = secrets.token_urlsafe(32)
    data = raw_key.encode()
    sealed = bytes(a ^ b for a, b in zip(data, _new_key_pad(token, len(data)), strict=True))
    cache.set(_new_key_slot(token, user_pk), sealed, NEW_KEY_HOLD_SECONDS)
    return token


def api_key_take_held(*, token: str, user_pk: int) -> str | None:
    """The key held by `api_key_hold_for_showing` for this token and user, once; None ever after (or if unknown)."""
    slot = _new_key_slot(token, user_pk)
    sealed = cache.get(slot)
    # Only the request whose delete removed the entry shows it: two requests at once cannot both get the key.
    if not isinstance(sealed, bytes) or not cache.delete(slot):
        return None
    return bytes(a ^ b for a, b in zip(sealed, _new_key_pad(token, len(sealed)), strict=True)).decode()


def tool_calls_prune(*, older_than_days: int) -> int:
    """Delete audit records older than the given number of days; returns how many were deleted."""
    if older_than_days < 1:
        raise ValueError("older_than_days must be at least 1")
    cutoff = timezone.now() - timedelta(days=older_than_days)
    deleted, _ = ToolCall.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def heartbeat_beat(
    *, name: str, kind: str, started_at: datetime.datetime, now: datetime.datetime | None = None
) -> None:
    """Record that the background process `name` is alive now (one upsert)."""
    now = now or timezone.now()
    Heartbeat.objects.bulk_create(
        [Heartbeat(name=name, kind=kind, started_at=started_at, beat_at=now)],
        update_conflicts=True,
        unique_fields=["name"],
        update_fields=["beat_at", "started_at"],
    )


def heartbeat_end(*, name: str) -> None:
    """A background process that stops normally says so (its RUNNING rows, if any, may be recovered at once)."""
    Heartbeat.objects.filter(name=name).delete()


def task_results_recover_lost(*, abandoned_by: str | None = None, now: datetime.datetime | None = None) -> int:
    """Queue again the task rows left RUNNING by a worker that is gone; returns how many.

    django-tasks-db marks a row RUNNING when a worker claims it and never looks at it again: a worker killed
    mid-task (kill -9, OOM, a host lost) would leave it RUNNING forever. A row is lost when its last worker has not
    beaten for HEARTBEAT_STALE (or never did), or when `abandoned_by` names that worker: a worker that lost the
    database mid-task and is starting over. The site's tasks are idempotent (each delivery holds its own lease), so
    running one again sends nothing twice.
    """
    now = now or timezone.now()
    alive = set(
        Heartbeat.objects.filter(kind=Heartbeat.Kind.TASK_WORKER, beat_at__gte=now - HEARTBEAT_STALE).values_list(
            "name", flat=True
        )
    )
    candidates = DBTaskResult.objects.running().values_list("pk", "worker_ids", "started_at")
    lost = [
        pk
        for pk, worker_ids, started_at in candidates
        if (last := (worker_ids or [""])[-1]) == abandoned_by
        or (last not in alive and (started_at is None or started_at < now - HEARTBEAT_STALE))
    ]
    if not lost:
        Heartbeat.objects.filter(beat_at__lt=now - HEARTBEAT_FORGET).delete()
        return 0
    with durable():
        # lock: the lost rows, so two recoveries (worker and scheduler) queue each once; a row a worker is finishing
        # right now is skipped
        rows = list(DBTaskResult.objects.running().filter(pk__in=lost).select_for_update(skip_locked=True))
        for row in rows:
            logger.warning(
                "Task %s (%s) was left running by worker %s, which is gone; queued again",
                row.pk,
                row.task_path,
                (row.worker_ids or ["?"])[-1],
            )
        DBTaskResult.objects.filter(pk__in=[row.pk for row in rows]).update(
            status=TaskResultStatus.READY, started_at=None
        )
        Heartbeat.objects.filter(beat_at__lt=now - HEARTBEAT_FORGET).delete()
    return len(rows)
