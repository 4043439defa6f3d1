"""Product search behind one interface: Meilisearch when `MEILISEARCH_URL` is set, else the database.

A backend turns a query into product ids, best first; `selectors.product_search` loads the rows
and applies the seed's fallbacks. Only the Meilisearch backend can fail for reasons outside the
project (down, 500, slow); it raises `SearchBackendError` and the selector falls back.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, F, Func, IntegerField, Q, Subquery, Value
from django.db.models.expressions import RawSQL
from rapidfuzz import fuzz

from .models import Product
from .search_backend import SearchBackend
from .search_keys import gram_token, normalize, query_terms

logger = logging.getLogger(__name__)

# The trigram tokenizer matches terms of three characters or more; shorter ones use LIKE/instr.
TRIGRAM = 3
# A lone short term is first looked for in the first this-many products (a bounded scan): enough for a term on
# 2% of them to fill a candidate cap of 100; rarer ones go through the gram index.
SHORT_SCAN_ROWS = 5000


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


def _fts_phrase(term: str) -> str:
    # An FTS5 string literal: the term is matched as a phrase, never parsed as query syntax.
    return '"' + term.replace('"', '""') + '"'


class Contains(Func):
    """1 when the column contains the term, else 0: instr() on SQLite, strpos() on PostgreSQL.

    Cheaper than LIKE for scoring rows already selected (no pattern escaping or case folding).
    """

    output_field = IntegerField()

    def __init__(self, column: str, term: str):
        super().__init__(F(column), Value(term))

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="(instr(%(expressions)s) > 0)", **extra)

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="(strpos(%(expressions)s) > 0)::int", **extra)


class DatabaseSearch:
    """The embedded default: normalised search keys, trigram index, rapidfuzz re-ranking.

    Candidates are the active in-stock products whose key contains one of the query's terms of 3+
    characters (trigram index: FTS5 on SQLite, pg_trgm GIN on PostgreSQL); shorter terms (抹茶, ぼ)
    cannot use a trigram index, so they only score those candidates, and select candidates by a
    scan only when no long term matched or the query has none. With several terms, the products
    holding all of them are tried first; only when they do not fill the cap are any-term candidates
    scored by how many terms they hold. Capped candidates are then re-ranked in Python by (terms
    matched, terms in the name, rapidfuzz partial similarity of the query to the name).
    At most three queries, whatever the number of hits.
    """

    name = "database"

    def __init__(self, *, short_index: bool = True):
        # short_index=False: short terms select candidates by a scan (the slow path the index must equal).
        self.short_index = short_index

    def candidate_cap(self, limit: int) -> int:
        return max(limit * 5, 100)

    def search(self, query: str, *, limit: int) -> list[int]:
        terms = query_terms(query)
        if not terms:
            return []
        long_terms = [t for t in terms if len(t) >= TRIGRAM]
        short_terms = [t for t in terms if len(t) < TRIGRAM]
        scored = terms if len(terms) > 1 else None  # one term: every candidate holds it
        rows = []
        if long_terms and len(terms) > 1:
            # Products holding every term rank first anyway; when they fill the cap, the costlier
            # any-term scoring query is not needed.
            every, fts = self._indexed_match(long_terms, every=True)
            for term in short_terms:
                every &= Q(search_key__contains=term)
            rows = self._candidates(every, limit, scored=None, matched=len(terms), fts=fts)
            if len(rows) < self.candidate_cap(limit):
                rows = []
        if long_terms and not rows:
            condition, fts = self._indexed_match(long_terms)
            rows = self._candidates(condition, limit, scored=scored, fts=fts)
        if not rows and short_terms:
            if scored is None and self.short_index:
                # A common short term (抹茶, ぼ) fills the cap within the first rows in id order, the same rows the
                # scan returns; through the gram index it would fetch all its matches (2-6x slower, measured).
                first = Q(id__lte=self._last_of_first_rows()) & Q(search_key__contains=short_terms[0])
                rows = self._candidates(first, limit, scored=None)
                if len(rows) < self.candidate_cap(limit):
                    rows = []
            if not rows and scored is None:  # one term
                condition, fts = self._short_match(short_terms[0])
                rows = self._candidates(condition, limit, scored=None, fts=fts)
            elif not rows:
                condition = Q()
                for term in short_terms:
                    term_condition, fts = self._short_match(term)
                    condition |= term_condition & fts.as_q() if fts is not None else term_condition
                rows = self._candidates(condition, limit, scored=scored)
        whole = " ".join(terms)

        def rank(row):
            pk, name, hits = row
            key = normalize(name)
            in_name = sum(1 for t in terms if t in key)
            return (-hits, -in_name, -fuzz.partial_ratio(whole, key), pk)

        return [row[0] for row in sorted(rows, key=rank)[:limit]]

    def _candidates(
        self, condition: Q, limit: int, *, scored: list[str] | None, matched: int = 1, fts: FtsMatch | None = None
    ) -> list[tuple[int, str, int]]:
        """(id, name, terms matched) of active in-stock rows meeting `condition` and `fts`, best first, capped.

        Without `scored` every row counts `matched` terms: ordered by id, so the scan stops at the cap.
        """
        rows = Product.objects.in_stock().filter(condition)
        order = "id"
        if fts is not None and scored is None:
            # Joined, not `id IN (SELECT rowid … MATCH)`: SQLite builds that IN list from every match before the
            # first row (a common term's thousands: カレンダ 13.7 ms against 0.8 ms joined, EXPLAIN QUERY PLAN "LIST
            # SUBQUERY"), while the join walks the FTS5 matches in rowid order, which is id order, up to the cap.
            rows = rows.extra(  # noqa: S610 (the table is ours, the query a parameter: see FtsMatch)
                tables=[fts.table],
                where=[f"{fts.table}.rowid = {Product._meta.db_table}.id", f"{fts.table} MATCH %s"],
                params=[fts.query],
            )
            order = RawSQL(f"{fts.table}.rowid", [], output_field=IntegerField()).asc()  # noqa: S611
        elif fts is not None:
            rows = rows.filter(fts.as_q())  # scored: every match is read to be scored anyway
        if scored is None:
            rows = rows.annotate(matched=Value(matched)).order_by(order)
        else:
            rows = rows.annotate(matched=sum((Contains("search_key", t) for t in scored), start=Value(0)))
            rows = rows.order_by("-matched", "id")
        return list(rows.values_list("id", "name", "matched")[: self.candidate_cap(limit)])

    def _last_of_first_rows(self) -> Subquery:
        """The id of the SHORT_SCAN_ROWS-th product in id order (NULL when there are fewer, so `id <=` it matches
        nothing): in-stock or not, so it is read from the primary key alone. A bound on the key, not
        `id IN (first rows)`: the scan still stops at the cap, where the IN list had to be built first."""
        return Subquery(Product.objects.order_by("id").values("id")[SHORT_SCAN_ROWS - 1 : SHORT_SCAN_ROWS])

    def _short_match(self, term: str) -> tuple[Q, FtsMatch | None]:
        """Rows whose key holds a 1- or 2-character term: through the gram index (migration 0002) when there is
        one, which narrows the rows `contains` then checks; else `contains` alone, a scan."""
        contains = Q(search_key__contains=term)
        if not self.short_index:
            return contains, None
        if connection.vendor == "sqlite" and sqlite_has_grams(connection.alias):
            return contains, FtsMatch("merchant_product_grams", gram_token(term))
        if connection.vendor == "postgresql":
            grams = RawSQL("merchant_short_grams(search_key) @> ARRAY[%s]::text[]", [term], output_field=BooleanField())
            return Q(grams) & contains, None
        return contains, None

    def _indexed_match(self, long_terms: list[str], *, every: bool = False) -> tuple[Q, FtsMatch | None]:
        """Rows whose key holds any (or `every`) of the terms, through the trigram index."""
        if connection.vendor == "sqlite" and sqlite_has_fts(connection.alias):
            return Q(), FtsMatch(
                "merchant_product_fts", (" AND " if every else " OR ").join(map(_fts_phrase, long_terms))
            )
        # PostgreSQL: LIKE '%term%' is served by the pg_trgm GIN index (terms of 3+ characters).
        condition = Q()
        for term in long_terms:
            condition = (
                (condition & Q(search_key__contains=term)) if every else (condition | Q(search_key__contains=term))
            )
        return condition, None


class MeilisearchSearch:
    """The official `meilisearch` client against index `MEILISEARCH_INDEX`, Japanese locale."""

    name = "meilisearch"

    def search(self, query: str, *, limit: int) -> list[int]:
        from . import meili

        return meili.search_ids(query, limit=limit)


def get_backend() -> SearchBackend:
    return MeilisearchSearch() if settings.MEILISEARCH_URL else DatabaseSearch()
