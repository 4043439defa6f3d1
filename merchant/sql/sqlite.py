"""SQLite's reads of the database search (`search.DatabaseSearch`): the FTS5 tables of migrations 0001 (trigram) and
0002 (1- and 2-character grams), which the ORM has no expression for."""

from __future__ import annotations

from typing import NamedTuple

from django.db import connection
from django.db.models import Q
from django.db.models.expressions import RawSQL

from ..models import Product

# A candidate row: (id, folded name, terms matched, listed fields...), as search.ROW_FIELDS says.
Row = tuple


class FtsMatch(NamedTuple):
    """Rows of an FTS5 table (SQLite; its rowid is the product id) matching `query`.

    `table` is one of this module's own table names, never input; `query` is always a bound parameter.
    """

    table: str
    query: str

    def as_q(self) -> Q:
        return Q(id__in=RawSQL(f"SELECT rowid FROM {self.table} WHERE {self.table} MATCH %s", [self.query]))  # noqa: S611


_tables_seen: set[tuple[str, str]] = set()


def _sqlite_has_table(alias: str, table: str) -> bool:
    """Whether a migration created this FTS5 table; only a yes is remembered."""
    if (alias, table) not in _tables_seen:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [table])
            if cursor.fetchone() is None:
                return False
        _tables_seen.add((alias, table))
    return True


def sqlite_has_fts(alias: str) -> bool:
    """Whether migration 0001 created the trigram FTS5 table (SQLite >= 3.34)."""
    return _sqlite_has_table(alias, "merchant_product_fts")


def sqlite_has_grams(alias: str) -> bool:
    """Whether migration 0002 created the short-term gram table (SQLite built with FTS5)."""
    return _sqlite_has_table(alias, "merchant_product_grams")


def fts_joined(fts: FtsMatch, checked: list[str], *, every: bool, cap: int, matched: int, columns: str) -> list[Row]:
    """The FTS5 table's matches joined to the active in-stock products holding every (or any) `checked` term.

    Joined, not `id IN (SELECT rowid … MATCH)`: SQLite builds that IN list from every match before the first row
    (a common term's thousands), while the join walks the FTS5 matches in rowid order, which is id order, up to the
    cap. Written as SQL: the ORM's building, compiling and converters would be a large share of a search
    (docs/decisions/0013-merchant-search-reads.md). `contains` here is instr(): the key and the terms are folded
    alike (lower case), and instr has no wildcards to escape.
    """
    held = (" AND " if every else " OR ").join(["instr(p.search_key, %s) > 0"] * len(checked))
    sql = (
        f"SELECT p.id, p.name_key, %s, {columns} FROM {Product._meta.db_table} p "  # noqa: S608 (our names)
        f"JOIN {fts.table} f ON f.rowid = p.id WHERE f.{fts.table} MATCH %s AND p.active AND p.inventory_count > 0"
        + (f" AND ({held})" if checked else "")
        + " ORDER BY f.rowid LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [matched, fts.query, *checked, cap])
        return cursor.fetchall()
