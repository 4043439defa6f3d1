"""ledger's SQL below the ORM (docs/decisions/0012-raw-sql.md): the bulk load of generated entries.

Kept because the benchmarks' data cannot be loaded in reasonable time without it: bench/bench_ledger.py and
bench/bench_export.py need 1,000,000 journal lines (`seed_ledger --scale 500000`), and building model instances for
`bulk_create` loads about 4,000 entries a second (over two minutes before each run). Values are adapted by the
backend's own `connection.ops`, and the deferred balance triggers (PostgreSQL) still check every entry at COMMIT.
Tested on SQLite and PostgreSQL: ledger/tests/test_seed_ledger.py.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction

from mcpsite.core.text import search_key

from .models import JournalEntry, JournalLine


def journal_rows_insert(entries: list[tuple[Any, ...]], lines: list[tuple[Any, ...]]) -> None:
    """Insert `entries` (id, date, description, created_at) and their `lines` (id, entry_id, line_no, account_id,
    debit, credit), adapted values, in one transaction. Each entry's folded description is written with it, as
    `JournalEntry.save` writes it."""
    entry_table = connection.ops.quote_name(JournalEntry._meta.db_table)
    line_table = connection.ops.quote_name(JournalLine._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {entry_table} (id, date, description, created_at, search_key) VALUES (%s, %s, %s, %s, %s)",
            [(*entry, search_key(entry[2])) for entry in entries],
        )
        cursor.executemany(
            f"INSERT INTO {line_table} (id, entry_id, line_no, account_id, debit, credit) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            lines,
        )
