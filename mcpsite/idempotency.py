"""Idempotency records: a key claimed in the caller's transaction, the outcome settled in it, expired ones pruned.

The MCP stage that uses them is `mcpsite/mcp/idempotency.py`; the rules are in docs/idempotency.md. Everything here
runs inside that stage's transaction (`mcpsite.core.db.hosting`), except `idempotency_records_prune`.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import OperationalError

from mcpsite.core.db import durable

from .core.db import insert_unless_present, update_with_flush_wait
from .core.errors import IdempotencyInProgress
from .core.jsonutil import dumps
from .models import IdempotencyRecord

# PostgreSQL's lock_not_available: the wait for the first call's transaction passed DATABASE_LOCK_TIMEOUT.
LOCK_NOT_AVAILABLE = "55P03"
# Seconds a caller whose key is in flight is told to wait.
IN_PROGRESS_RETRY_AFTER = 1


def retention() -> datetime.timedelta:
    return datetime.timedelta(seconds=settings.MCP_IDEMPOTENCY_RETENTION)


def arguments_digest(*, tool: str, arguments: Any) -> str:
    """A keyed digest (HMAC-SHA256 under SECRET_KEY) of a call's validated arguments, compared as parsed JSON values
    (key order and whitespace do not count; SEP-3182 "Request equivalence"). Keyed, so a short secret among the
    arguments (a reservation password) cannot be found from the record by trying every value."""
    canonical = json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    key = hashlib.sha256(b"mcpsite.idempotency:" + settings.SECRET_KEY.encode()).digest()
    return hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()


def principal_digest(principal: str) -> str:
    return hashlib.sha256(principal.encode()).hexdigest()


def idempotency_claim(
    *, principal: str, tool: str, key: str, digest: str, now: datetime.datetime
) -> tuple[IdempotencyRecord, bool]:
    """Claim `key` of `principal` for `tool` in the current transaction: (the claim, True) when it is new (the caller
    runs the tool and settles the claim before it commits), else (the record an earlier call committed, False).

    The unique claim is what makes a repeat wait: on PostgreSQL the insert waits for the transaction holding the
    same claim and does nothing once that one commits (or inserts, when it rolled back: the key was left free); on
    SQLite the caller's transaction began only after the other one ended. A wait longer than DATABASE_LOCK_TIMEOUT is
    refused as in progress. A record older than the retention is removed and the key claimed anew.
    """
    fields = {"principal": principal, "tool": tool, "key": key}
    claim = {**fields, "arguments_digest": digest, "outcome": IdempotencyRecord.Outcome.PENDING.value, "result": ""}
    for _attempt in range(2):
        try:
            pk = insert_unless_present(IdempotencyRecord, {**claim, "created_at": now}, unique=list(fields))
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                raise
            raise IdempotencyInProgress(data=_in_progress_data(key), retry_after=IN_PROGRESS_RETRY_AFTER) from None
        if pk is not None:
            return IdempotencyRecord(pk=pk, **claim, created_at=now), True
        record = IdempotencyRecord.objects.get(**fields)
        if record.created_at >= now - retention():
            return record, False
        IdempotencyRecord.objects.filter(pk=record.pk).delete()  # expired: the key is new again
    raise IdempotencyInProgress(data=_in_progress_data(key), retry_after=IN_PROGRESS_RETRY_AFTER)


def _in_progress_data(key: str) -> dict[str, Any]:
    return {
        "type": "idempotency_key_in_progress",
        "idempotencyKey": key,
        "message": "A request with this idempotency key is still running; retry it shortly",
    }


def idempotency_settle(*, claim: IdempotencyRecord, outcome: str, result: dict[str, Any]) -> None:
    """Store the claimed call's outcome, in the transaction of the claim and the tool's write."""
    # As every door writes JSON (Decimals as numbers); committed with the WAL flushed, as the tool's write needs.
    update_with_flush_wait(IdempotencyRecord, claim.pk, {"outcome": outcome, "result": dumps(result)})


def idempotency_result(*, record: IdempotencyRecord) -> dict[str, Any]:
    """What `idempotency_settle` stored, as it was given."""
    return json.loads(record.result)


def idempotency_release(*, claim: IdempotencyRecord) -> None:
    """Give the key back (the call ended with a refusal that says when to come back, not an outcome)."""
    IdempotencyRecord.objects.filter(pk=claim.pk).delete()


def idempotency_records_prune(
    *, now: datetime.datetime, batch: int = 1000, progress: Callable[[int], None] | None = None
) -> int:
    """Delete the records older than the retention, `batch` at a time (each its own short transaction, so a large
    backlog never holds locks for long); `progress(total so far)` after each batch. Returns how many."""
    cutoff = now - retention()
    total = 0
    while True:
        with durable():
            pks = list(
                IdempotencyRecord.objects.filter(created_at__lt=cutoff)
                .order_by("created_at")
                .values_list("pk", flat=True)[:batch]
            )
            if not pks:
                return total
            total += IdempotencyRecord.objects.filter(pk__in=pks).delete()[0]
        if progress is not None:
            progress(total)
