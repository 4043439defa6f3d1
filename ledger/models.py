"""Double-entry books: a chart of accounts, journal entries and their debit/credit lines.

The database keeps the books honest: each line has exactly one positive side (CHECK constraints),
and on PostgreSQL deferred constraint triggers (migration 0001) refuse to commit an entry whose
debits differ from its credits or that has fewer than two lines, and refuse edits to posted rows.
On SQLite the service (`services.journal_entry_create`) enforces the same rules.
"""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from mcpsite.core import text
from mcpsite.formats import day

AMOUNT_DIGITS = 18
AMOUNT_PLACES = 2
# The largest line amount: 15 significant digits, what both databases hold exactly. SQLite keeps a decimal as an
# 8-byte float, exact to 15 significant digits, and Django reads it back rounded to 15 (12,345,678,901,234.56 came
# back as .6); the column's 18 digits are PostgreSQL's. docs/apps/ledger.md, "Amounts".
EXACT_DIGITS = 15
MAX_AMOUNT = Decimal(10) ** (EXACT_DIGITS - AMOUNT_PLACES) - Decimal("0.01")


class AccountType(models.TextChoices):
    ASSET = "asset", _("asset")
    LIABILITY = "liability", _("liability")
    EQUITY = "equity", _("equity")
    REVENUE = "revenue", _("revenue")
    EXPENSE = "expense", _("expense")


# Assets and expenses grow on the debit side; liabilities, equity and revenue on the credit side.
DEBIT_NORMAL = frozenset({AccountType.ASSET, AccountType.EXPENSE})


class Account(models.Model):
    code = models.CharField(_("code"), max_length=20, unique=True)
    name = models.CharField(_("account name"), max_length=100)
    type = models.CharField(_("type"), max_length=10, choices=AccountType.choices)
    category = models.CharField(_("category"), max_length=100, blank=True)
    is_active = models.BooleanField(_("active"), default=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(type__in=AccountType.values), name="ledger_account_type_valid"),
            models.CheckConstraint(condition=~Q(code=""), name="ledger_account_code_not_empty"),
        ]
        ordering = ["code"]
        verbose_name = _("account")
        verbose_name_plural = _("accounts")

    def __str__(self) -> str:
        return f"{self.code} {self.name}"

    @property
    def is_debit_normal(self) -> bool:
        return self.type in DEBIT_NORMAL


class ImmutableError(Exception):
    """A posted entry or line was about to be changed; post a reversal instead."""


class JournalEntry(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    date = models.DateField(_("date"), db_index=True)
    description = models.CharField(_("description"), max_length=500)
    # The description folded by `search_key` for the staff's search; a trigram index on PostgreSQL.
    search_key = models.TextField(_("description (folded)"), blank=True, editable=False, db_default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("created by"),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    # A reversal entry points at the entry it cancels; one reversal per entry at most.
    reversal_of = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reversal", verbose_name=_("reversal of")
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(reversal_of=F("id")), name="ledger_entry_not_self_reversal"),
            models.CheckConstraint(condition=~Q(description=""), name="ledger_entry_description_not_empty"),
        ]
        ordering = ["-date", "-created_at"]
        # The entry list's order, walked backwards: a page of it reads 100 rows, not every entry.
        indexes = [models.Index(fields=["date", "created_at", "id"], name="ledger_entry_list_order_idx")]
        verbose_name = _("journal entry")
        verbose_name_plural = _("journal entries")

    def __str__(self) -> str:
        return f"{day(self.date)} {self.description}"

    def save(self, *args, **kwargs):
        # Posted entries are immutable (PostgreSQL also refuses it with a trigger).
        if not self._state.adding:
            raise ImmutableError("Posted journal entries cannot be changed; post a reversal entry instead.")
        self.search_key = text.search_key(self.description)
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableError("Posted journal entries cannot be deleted; post a reversal entry instead.")


class JournalLine(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    entry = models.ForeignKey(
        JournalEntry, on_delete=models.PROTECT, related_name="lines", verbose_name=_("journal entry")
    )
    line_no = models.PositiveSmallIntegerField(_("line number"), default=0)
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="lines", verbose_name=_("account"))
    debit = models.DecimalField(_("debit"), max_digits=AMOUNT_DIGITS, decimal_places=AMOUNT_PLACES, default=Decimal(0))
    credit = models.DecimalField(
        _("credit"), max_digits=AMOUNT_DIGITS, decimal_places=AMOUNT_PLACES, default=Decimal(0)
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(debit__gte=0), name="ledger_line_debit_not_negative"),
            models.CheckConstraint(condition=Q(credit__gte=0), name="ledger_line_credit_not_negative"),
            # What both databases hold exactly (MAX_AMOUNT); the service refuses more with a message first.
            models.CheckConstraint(
                condition=Q(debit__lte=MAX_AMOUNT) & Q(credit__lte=MAX_AMOUNT), name="ledger_line_amount_exact_range"
            ),
            models.CheckConstraint(
                condition=(Q(debit__gt=0) & Q(credit=0)) | (Q(credit__gt=0) & Q(debit=0)),
                name="ledger_line_one_side",
            ),
            models.UniqueConstraint(fields=["entry", "line_no"], name="ledger_line_unique_line_no"),
        ]
        # The entry list's account filter (ledger/admin.py): "has this entry a line on that account" from the index.
        indexes = [models.Index(fields=["account", "entry"], name="ledger_line_account_entry_idx")]
        ordering = ["entry", "line_no"]
        verbose_name = _("journal line")
        verbose_name_plural = _("journal lines")

    def __str__(self) -> str:
        side = f"{_('debit')} {self.debit}" if self.debit else f"{_('credit')} {self.credit}"
        return f"{self.account_id} {side}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableError("Posted journal lines cannot be changed; post a reversal entry instead.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableError("Posted journal lines cannot be deleted; post a reversal entry instead.")


class AccountDayTotal(models.Model):
    """One account's debit and credit totals on one day (its entries' date), in whole cents (exact on SQLite,
    which keeps decimals as REAL). Written only by database triggers on the lines (migration
    0004_account_day_totals, both backends), whichever way a line is written, so the reports and the dashboard
    read at most accounts × days rows instead of every line."""

    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="+", db_index=False, verbose_name=_("account")
    )
    date = models.DateField(_("date"))
    debit_cents = models.DecimalField(_("debit (cents)"), max_digits=38, decimal_places=0, default=0)
    credit_cents = models.DecimalField(_("credit (cents)"), max_digits=38, decimal_places=0, default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "date"], name="ledger_day_total_unique")]
        verbose_name = _("account day total")
        verbose_name_plural = _("account day totals")

    def __str__(self) -> str:
        return f"{self.account_id} {self.date}"
