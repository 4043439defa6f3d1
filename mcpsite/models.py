"""Platform records: API keys (stored as digests) and the tool-call audit log."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from mcpsite.core.scopes import scopes_allow
from mcpsite.core.search import with_update_fields
from mcpsite.core.text import search_key

KEY_PREFIX = "mcp_"


def key_digest(raw_key: str) -> str:
    # Keys are 256-bit random strings, so a fast digest suffices (a slow hash would tax every call).
    return hashlib.sha256(raw_key.encode()).hexdigest()


def default_rate() -> str:
    return settings.MCP_DEFAULT_RATE


class ApiKey(models.Model):
    name = models.CharField(_("name"), max_length=100)
    # The name folded by `search_key` for the staff's search.
    name_key = models.TextField(_("name (folded)"), blank=True, editable=False, db_default="")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys", verbose_name=_("owner")
    )
    prefix = models.CharField(
        _("prefix"), max_length=16, help_text=_("The first characters of the key, to recognise it.")
    )
    digest = models.CharField(_("digest"), max_length=64, unique=True, editable=False)
    scopes = models.JSONField(_("scopes"), default=list, help_text=_("Tool groups this key may use."))
    rate = models.CharField(
        _("rate"), max_length=20, default=default_rate, help_text=_("Requests per period, e.g. 100/m.")
    )
    is_active = models.BooleanField(_("active"), default=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    last_used_at = models.DateTimeField(_("last used at"), null=True, blank=True)

    class Meta:
        verbose_name = _("API key")
        verbose_name_plural = _("API keys")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def save(self, *args, **kwargs):
        self.name_key = search_key(self.name)
        super().save(*args, **with_update_fields(kwargs, "name_key"))

    def set_new_key(self) -> str:
        """Give this record a new random key; returns the raw key (shown once: only its digest is kept)."""
        raw_key = KEY_PREFIX + secrets.token_urlsafe(32)
        self.digest = key_digest(raw_key)
        self.prefix = raw_key[:10]
        return raw_key

    def allows(self, group: str, mode: str | None = None) -> bool:
        """Whether this key may use `group`'s tools of `mode` (READ or WRITE; None: any of them)."""
        return scopes_allow(self.scopes, group, mode)

    def audit_fields(self) -> dict:
        """What a ToolCall records of the credential that made it, by attname (an OAuth token records its client
        instead)."""
        return {"api_key_id": self.pk, "user_id": self.owner_id}


class ToolCallOutcome(models.TextChoices):
    OK = "ok", _("ok")
    ERROR = "error", _("error")
    DENIED = "denied", _("denied")
    RATE_LIMITED = "rate_limited", _("rate limited")
    INTERNAL = "internal", _("internal error")
    # Answered with a question (MCP 2026-07-28 multi round-trip confirmation); the answer comes in another call.
    INPUT_REQUIRED = "input_required", _("input required")


class ToolCall(models.Model):
    Outcome = ToolCallOutcome

    # When the call ended (set by the dispatcher; rows are written in batches, later).
    created_at = models.DateTimeField(_("called at"), default=timezone.now, editable=False, db_index=True)
    api_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls", verbose_name=_("API key")
    )
    # Who acted (the key's owner, or the user who signed in an OAuth client) and through which OAuth client.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("user"),
    )
    oauth_client = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("OAuth client"),
    )
    transport = models.CharField(_("transport"), max_length=10, db_index=True)
    tool = models.CharField(_("tool"), max_length=100, db_index=True)
    duration_ms = models.PositiveIntegerField(_("duration (ms)"), default=0)
    outcome = models.CharField(_("outcome"), max_length=20, choices=Outcome.choices, db_index=True)
    error_code = models.CharField(_("error code"), max_length=40, blank=True)
    # The credential's scope that allowed the call (`ledger`, `ledger:read`), or the one it lacked when refused.
    # A database default too: the previous release, still serving during an upgrade, inserts rows without it.
    scope = models.CharField(_("scope"), max_length=60, blank=True, db_default="")
    # What the caller was told went wrong (the error's detail, never an argument's value: mcp/arguments.py), cut
    # to its length; a database default, so a writer that does not know it still inserts.
    error_message = models.CharField(_("error message"), max_length=500, blank=True, db_default="")
    request_id = models.CharField(_("request ID"), max_length=64, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("tool call")
        verbose_name_plural = _("tool calls")
        # The dashboard's calls of the last 24 hours per tool and per key (mcpsite/selectors.py): the range of
        # recent calls read from the index alone, never the table nor the older calls.
        indexes = [
            models.Index(
                fields=["created_at", "tool", "api_key", "duration_ms", "outcome"], name="toolcall_recent_idx"
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(outcome__in=ToolCallOutcome.values),
                name="toolcall_outcome_valid",
            )
        ]

    def __str__(self) -> str:
        return f"{self.tool} {self.get_outcome_display()} ({self.request_id})"


class RateWindow(models.Model):
    """Where one rate's sliding window log stands for one counted value (mcpsite/core/limits.py).

    A window of rate N per period keeps the times of its last N admissions in N ring slots (RateSlot);
    `next_slot` is the oldest of them, the one the next admission would overwrite. Its row is the lock that
    serialises a window's takes.
    """

    bucket = models.CharField(primary_key=True, max_length=200)
    next_slot = models.PositiveIntegerField(default=0)
    last_at = models.FloatField(help_text="Seconds since the epoch of the latest admission.")
    # The rate's period in seconds: a period after last_at every slot is free, and the rows may be pruned. Not
    # indexed, and no indexed column changes on a take, so PostgreSQL updates the row in place (HOT) on every call.
    period = models.PositiveIntegerField()

    def __str__(self) -> str:
        return self.bucket


class RateSlot(models.Model):
    """One admission's time in a RateWindow's ring (seconds since the epoch)."""

    pk = models.CompositePrimaryKey("bucket", "slot")
    bucket = models.CharField(max_length=200)
    slot = models.PositiveIntegerField()
    at = models.FloatField()

    def __str__(self) -> str:
        return f"{self.bucket} #{self.slot}"


class Heartbeat(models.Model):
    """The last sign of life of one long-running process (a task worker, the reminder scheduler).

    Read by `/readyz` and `/metrics`, and by the recovery of task rows a dead worker left RUNNING.
    """

    class Kind(models.TextChoices):
        TASK_WORKER = "task_worker", _("task worker")
        SCHEDULER = "scheduler", _("scheduler")

    name = models.CharField(_("name"), primary_key=True, max_length=100)  # the worker id, or scheduler@host:pid
    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices)
    started_at = models.DateTimeField(_("started at"))
    beat_at = models.DateTimeField(_("last heartbeat"), db_index=True)

    class Meta:
        verbose_name = _("heartbeat")
        verbose_name_plural = _("heartbeats")

    def __str__(self) -> str:
        return self.name


class IdempotencyRecord(models.Model):
    """The first outcome of a writing tool's call under one idempotency key (mcpsite/mcp/idempotency.py).

    Claimed in the transaction of the tool's own write: the unique claim (credential, tool, key) and the write
    commit together or not at all, so a retry on any process finds either both or neither. A repeat of the claim
    waits for the first's transaction (the unique index) and then reads its outcome.
    """

    class Outcome(models.TextChoices):
        # The claim, before the tool ends; never committed (the outcome replaces it in the same transaction).
        PENDING = "pending", _("pending")
        OK = "ok", _("ok")
        ERROR = "error", _("error")

    # A digest of the credential (API key, OAuth user and client, or the stdio user): the record's scope.
    principal = models.CharField(_("credential digest"), max_length=64)
    tool = models.CharField(_("tool"), max_length=100)
    key = models.CharField(_("idempotency key"), max_length=255)
    # A keyed digest (HMAC under SECRET_KEY) of the tool's validated arguments: a password is never stored.
    arguments_digest = models.CharField(_("arguments digest"), max_length=64)
    outcome = models.CharField(_("outcome"), max_length=10, choices=Outcome.choices)
    # The tool's result (`data`, `is_error`, `meta`), or the error it raised (`kind`, `message`, `data`), as JSON
    # text: a replay is the first answer byte for byte (PostgreSQL's jsonb would reorder its keys).
    result = models.TextField(_("result"))
    created_at = models.DateTimeField(_("created at"), db_index=True)

    class Meta:
        verbose_name = _("idempotency record")
        verbose_name_plural = _("idempotency records")
        constraints = [
            models.UniqueConstraint(fields=["principal", "tool", "key"], name="idempotency_claim_unique"),
            models.CheckConstraint(
                condition=Q(outcome__in=["pending", "ok", "error"]), name="idempotency_outcome_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tool} {self.key}"
