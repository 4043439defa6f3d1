"""Ledger writes: posting journal entries, reversing them, (de)activating accounts.

Lock order, written once: the original entry (reversals) first, then accounts by code. Python checks
come first only to give good messages; the database refuses the same bad rows (models, migration 0002).
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.translation import gettext_noop

from mcpsite.core.db import durable
from mcpsite.core.errors import Conflict, InvalidParams, Message, NotFound
from mcpsite.core.text import trimmed

from .models import MAX_AMOUNT, Account, JournalEntry, JournalLine

if TYPE_CHECKING:
    from django.contrib.auth.models import User

CENT = Decimal("0.01")
DESCRIPTION_MAX: int = JournalEntry._meta.get_field("description").max_length  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class LineInput:
    """One requested line: an account code and one positive side."""

    account_code: str
    debit: Decimal = Decimal(0)
    credit: Decimal = Decimal(0)


def yen(value: Decimal) -> str:
    """430000 -> '430,000'; amounts with cents keep two places ('1,234.50')."""
    if value == value.to_integral_value():
        return f"{int(value):,}"
    return f"{value.quantize(CENT):,}"


def amount_validate(*, value: Decimal, where: str) -> Decimal:
    """A valid line amount: finite, not negative, at most 2 decimal places, within the column."""
    if not value.is_finite():
        raise InvalidParams(Message(gettext_noop("%(where)s must be a finite number"), where=where))
    if value < 0:
        raise InvalidParams(
            Message(
                gettext_noop("%(where)s must not be negative (got %(value)s); use the other side instead"),
                where=where,
                value=value,
            )
        )
    if value != value.quantize(CENT):
        raise InvalidParams(
            Message(gettext_noop("%(where)s has more than 2 decimal places (got %(value)s)"), where=where, value=value)
        )
    if value > MAX_AMOUNT:
        raise InvalidParams(
            Message(gettext_noop("%(where)s is too large (maximum %(max)s)"), where=where, max=yen(MAX_AMOUNT))
        )
    return value.quantize(CENT)


def journal_lines_validate(*, lines: Sequence[LineInput]) -> None:
    """Shape rules of an entry's lines (InvalidParams): 2+ lines, each with exactly one positive side."""
    if len(lines) < 2:
        raise InvalidParams(
            Message(gettext_noop("A journal entry needs at least 2 lines (got %(count)d)"), count=len(lines))
        )
    for i, line in enumerate(lines):
        where = f"lines[{i}]"
        if not line.account_code.strip():
            raise InvalidParams(Message(gettext_noop("%(where)s.accountCode must not be empty"), where=where))
        debit = amount_validate(value=line.debit, where=f"{where}.debitAmount")
        credit = amount_validate(value=line.credit, where=f"{where}.creditAmount")
        if debit > 0 and credit > 0:
            raise InvalidParams(
                Message(
                    gettext_noop(
                        "%(where)s has both debitAmount and creditAmount; a line is either a debit or a credit"
                    ),
                    where=where,
                )
            )
        if debit == 0 and credit == 0:
            raise InvalidParams(
                Message(
                    gettext_noop("%(where)s has no amount; give a positive debitAmount or creditAmount"), where=where
                )
            )


def journal_balance_validate(*, lines: Sequence[LineInput]) -> None:
    """Conflict (409) when debits and credits differ, saying by how much."""
    debits = sum((line.debit for line in lines), Decimal(0))
    credits = sum((line.credit for line in lines), Decimal(0))
    if debits != credits:
        difference = abs(debits - credits)
        bigger = Message(gettext_noop("debits")) if debits > credits else Message(gettext_noop("credits"))
        raise Conflict(
            Message(
                gettext_noop(
                    "Debits and credits do not balance: debits %(debits)s ≠ credits %(credits)s "
                    "(%(bigger)s exceed by %(difference)s)"
                ),
                debits=yen(debits),
                credits=yen(credits),
                bigger=bigger,
                difference=yen(difference),
            ),
            data={"debitTotal": debits, "creditTotal": credits, "difference": difference},
        )


def _description_validate(description: str) -> str:
    return trimmed(
        description,
        limit=DESCRIPTION_MAX,
        blank="description must not be empty",
        too_long="description is too long ({length} characters; maximum {limit})",
    )


def _lock_accounts(codes: set[str]) -> dict[str, Account]:
    # FOR NO KEY UPDATE, in code order: a concurrent deactivation waits until this entry commits,
    # so no line lands on an account deactivated after the active check. Lines' FK checks still pass.
    found = Account.objects.filter(code__in=codes).order_by("code").select_for_update(no_key=True)
    return {account.code: account for account in found}


def _post(
    *,
    date: datetime.date,
    description: str,
    lines: Sequence[LineInput],
    actor: User | None,
    reversal_of: JournalEntry | None,
    allow_inactive: bool,
) -> JournalEntry:
    accounts = _lock_accounts({line.account_code for line in lines})
    unknown = sorted({line.account_code for line in lines} - accounts.keys())
    if unknown:
        raise NotFound(
            f"Unknown account code(s): {', '.join(unknown)}",
            data={"unknownAccountCodes": unknown, "message": "Use list_accounts to see the chart of accounts"},
        )
    inactive = sorted(code for code, account in accounts.items() if not account.is_active)
    if inactive and not allow_inactive:
        names = ", ".join(f"{code} {accounts[code].name}" for code in inactive)
        raise InvalidParams(
            f"Inactive account(s) cannot be posted to: {names}", data={"inactiveAccountCodes": inactive}
        )
    journal_balance_validate(lines=lines)
    entry = JournalEntry.objects.create(date=date, description=description, created_by=actor, reversal_of=reversal_of)
    JournalLine.objects.bulk_create(
        JournalLine(
            entry=entry,
            line_no=i,
            account=accounts[line.account_code],
            debit=line.debit.quantize(CENT),
            credit=line.credit.quantize(CENT),
        )
        for i, line in enumerate(lines, start=1)
    )
    return entry


def journal_entry_create(
    *,
    date: datetime.date,
    description: str,
    lines: Sequence[LineInput],
    actor: User | None = None,
) -> JournalEntry:
    """Post a balanced journal entry. Posted entries are immutable; correct them with a reversal.

    Raises InvalidParams (shape, amounts, inactive accounts), NotFound (unknown account codes) or
    Conflict (debits ≠ credits).
    """
    description = _description_validate(description)
    journal_lines_validate(lines=lines)
    with durable():
        return _post(
            date=date,
            description=description,
            lines=lines,
            actor=actor,
            reversal_of=None,
            allow_inactive=False,
        )


def _lock_entry_for_reversal(entry_id: uuid.UUID | str) -> JournalEntry:
    # FOR UPDATE on the original: two staff reversing the same entry at once queue here, and the
    # second sees the first's reversal (the one-to-one constraint is the backstop).
    try:
        return JournalEntry.objects.select_for_update().get(pk=entry_id)
    except (JournalEntry.DoesNotExist, ValidationError, ValueError, TypeError):
        raise NotFound(f"Journal entry {entry_id} not found") from None


def journal_entry_reverse(
    *,
    entry_id: uuid.UUID | str,
    date: datetime.date | None = None,
    description: str | None = None,
    actor: User | None = None,
) -> JournalEntry:
    """Post the reversal of an entry: the same lines with debit and credit swapped.

    Dated today (Asia/Tokyo) unless given, never before the original. An entry is reversed at most
    once, and a reversal itself is not reversed (post a new entry instead).
    """
    with durable():
        original = _lock_entry_for_reversal(entry_id)
        if original.reversal_of_id is not None:
            raise InvalidParams(
                Message(
                    gettext_noop("Entry %(entry)s is itself a reversal; post a new entry instead"), entry=original.pk
                )
            )
        if JournalEntry.objects.filter(reversal_of=original).exists():
            raise Conflict(Message(gettext_noop("Entry %(entry)s has already been reversed"), entry=original.pk))
        date = date or timezone.localdate()
        if date < original.date:
            raise InvalidParams(
                Message(
                    gettext_noop("A reversal cannot be dated before the original entry (%(date)s)"), date=original.date
                )
            )
        lines = [
            LineInput(account_code=line.account.code, debit=line.credit, credit=line.debit)
            for line in original.lines.select_related("account").order_by("line_no")
        ]
        text = _description_validate(description or f"取消: {original.description}"[:DESCRIPTION_MAX])
        # Reversals may touch accounts deactivated since: undoing history must stay possible.
        return _post(date=date, description=text, lines=lines, actor=actor, reversal_of=original, allow_inactive=True)


def account_set_active(*, account: Account, active: bool) -> Account:
    """Activate or deactivate an account; deactivated accounts keep their history but take no new lines."""
    with durable():
        # FOR UPDATE: waits for entries posting to this account (they hold FOR NO KEY UPDATE).
        locked = Account.objects.select_for_update().get(pk=account.pk)
        if locked.is_active != active:
            locked.is_active = active
            locked.save(update_fields=["is_active"])
    return locked
