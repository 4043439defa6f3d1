"""Product search behind one interface: Meilisearch when `MEILISEARCH_URL` is set, else the database.

A backend turns a query into products, best first (`search` gives their ids); `selectors.product_search` applies
the seed's fallbacks. The database backend builds the products from its candidate rows; Meilisearch's ids are
loaded from the database (`products_in_order`), so stock and prices are always current. Only the Meilisearch backend
can fail for reasons outside the project (down, 500, slow); it raises `SearchBackendError` and the selector falls
back.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import connection
from django.db.models import F, Func, IntegerField, Q, Value
from rapidfuzz import fuzz

from mcpsite.core.db import has_fts5, has_trigram_indexes

from .models import Product
from .search_backend import SearchBackend
from .search_keys import TRIGRAM, gram_token, query_terms, term_grams
from .sql.postgresql import Candidates, short_grams_hold
from .sql.sqlite import FtsMatch, fts_joined, sqlite_has_fts, sqlite_has_grams

logger = logging.getLogger(__name__)


def _fts_phrase(term: str) -> str:
    # An FTS5 string literal: the term is matched as a phrase, never parsed as query syntax.
    return '"' + term.replace('"', '""') + '"'


def _gram_query(term: str) -> str:
    """The gram-index query a key holding `term` must match (`term_grams`); `contains` then decides."""
    return " AND ".join(map(gram_token, term_grams(term)))


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


# A candidate row: (id, folded name, terms matched, then the rest of Product.LISTED_FIELDS but `active`). The listed
# fields come with the candidates so the products found are built from them, without a second query for the 20.
Row = tuple
# `active` is not read: every candidate is active (the in-stock filter), and SQLite would return it as an integer.
ROW_FIELDS = ("id", "name_key", "matched", *(f for f in Product.LISTED_FIELDS if f not in ("id", "active")))
_LISTED_COLUMNS = ", ".join(f"p.{Product._meta.get_field(name).column}" for name in ROW_FIELDS[3:])  # type: ignore[union-attr]  # concrete fields


def products_in_order(*, ids: list[int]) -> list[Product]:
    """Active in-stock products among `ids`, in the order of `ids`: one query (no per-id loop)."""
    rows = Product.objects.in_stock().filter(pk__in=ids).only(*Product.LISTED_FIELDS)
    found = {product.pk: product for product in rows}
    return [found[pk] for pk in dict.fromkeys(ids) if pk in found]


class DatabaseSearch:
    """The embedded default: normalised search keys, trigram and gram indexes, rapidfuzz re-ranking.

    Candidates are the active in-stock products whose key holds every term of the query, in id order up to the
    cap. When fewer hold every term, the others follow: those holding any term of 3+ characters (or, when none
    does, any shorter term), by terms matched, then id. Capped candidates are then re-ranked in Python by (terms
    matched, terms in the name, rapidfuzz partial similarity of the query to the name).

    Indexes: terms of 3+ characters through the trigram index (FTS5 on SQLite, pg_trgm GIN on PostgreSQL); shorter
    ones through the gram index of every 1- and 2-character substring (migration 0002). On SQLite both are FTS5
    tables joined in rowid (= id) order, so a query reads its matches only up to the cap. On PostgreSQL, whose GIN
    indexes give matches in no order, `sql.postgresql.Candidates` chooses between a walk in id order and the
    index (in windows of ids) from ANALYZE's statistics of the gram index. With `indexed=False`
    every term is looked for by a scan: the slow path the indexes must equal (property-tested).
    """

    name = "database"

    def __init__(self, *, indexed: bool = True):
        self.indexed = indexed

    def candidate_cap(self, limit: int) -> int:
        return max(limit * 5, 100)

    def search(self, query: str, *, limit: int) -> list[int]:
        return [row[0] for row in self._ranked(query, limit)]

    def products(self, query: str, *, limit: int) -> list[Product]:
        alias, names = connection.alias, ["id", *ROW_FIELDS[3:], "active"]
        return [Product.from_db(alias, names, [row[0], *row[3:], True]) for row in self._ranked(query, limit)]

    def _ranked(self, query: str, limit: int) -> list[Row]:
        terms = query_terms(query)
        if not terms:
            return []
        cap = self.candidate_cap(limit)
        rows = self._holding(terms, every=True, cap=cap, matched=len(terms))
        if len(terms) > 1 and len(rows) < cap:
            # Products holding a term of 3+ characters; only when there are none, those holding a shorter one.
            long_terms = [t for t in terms if len(t) >= TRIGRAM]
            for selecting in (long_terms, [t for t in terms if len(t) < TRIGRAM]):
                if selecting and (some := self._holding_some(selecting, terms, rows, cap)):
                    rows = some
                    break
        whole = " ".join(terms)

        def rank(row: Row):
            pk, key, hits = row[:3]
            in_name = sum(1 for t in terms if t in key)
            return (-hits, -in_name, -fuzz.partial_ratio(whole, key), pk)

        return sorted(rows, key=rank)[:limit]

    def _holding_some(self, selecting: list[str], terms: list[str], every: list[Row], cap: int) -> list[Row]:
        """After `every` (the rows holding all `terms`, fewer than the cap): the rows holding any `selecting` term,
        by terms matched, then id."""
        if len(terms) == 2:
            # Each row besides `every` holds exactly one term: id order is the order, and the query stops at the
            # cap (scoring every match first would read all of a common term's thousands).
            seen = {row[0] for row in every}
            some = self._holding(selecting, every=False, cap=cap + len(every), matched=1)
            return [*every, *(row for row in some if row[0] not in seen)][:cap]
        condition = self._condition(selecting, every=False)
        fts = self._sqlite_index(selecting, every=False) if self.indexed and has_fts5(connection) else None
        if fts is not None:  # every match is read to be scored anyway: the index as an IN list
            condition &= fts.as_q()
        rows = self._in_stock(condition)
        rows = rows.annotate(matched=sum((Contains("search_key", t) for t in terms), start=Value(0)))
        return list(rows.order_by("-matched", "id").values_list(*ROW_FIELDS)[:cap])

    def _holding(self, terms: list[str], *, every: bool, cap: int, matched: int) -> list[Row]:
        """The candidate rows (id, name key, `matched`, the listed fields) of the active in-stock products whose key
        holds every (or any) term, in id order, at most `cap`."""
        if self.indexed and has_fts5(connection):
            fts = self._sqlite_index(terms, every=every)
            if fts is not None:
                # Trigram phrases match exactly; the gram index only narrows, `contains` decides.
                checked = [] if fts.table == "merchant_product_fts" else terms
                return fts_joined(fts, checked, every=every, cap=cap, matched=matched, columns=_LISTED_COLUMNS)
        elif self.indexed and has_trigram_indexes(connection):
            return Candidates(terms, every=every, cap=cap, matched=matched, columns=_LISTED_COLUMNS).rows()
        return self._in_stock(self._contains(terms, every=every), matched, cap)

    def _in_stock(self, condition: Q, matched: int | None = None, cap: int | None = None):
        rows = Product.objects.in_stock().filter(condition)
        if matched is None:
            return rows
        return list(rows.annotate(matched=Value(matched)).order_by("id").values_list(*ROW_FIELDS)[:cap])

    def _sqlite_index(self, terms: list[str], *, every: bool) -> FtsMatch | None:
        """The FTS5 query narrowing the rows that hold every (or any) term: the trigram table when every term has
        3+ characters (its phrases match exactly), else the gram table (candidates `contains` then checks)."""
        alias = connection.alias
        if all(len(t) >= TRIGRAM for t in terms) and sqlite_has_fts(alias):
            return FtsMatch("merchant_product_fts", (" AND " if every else " OR ").join(map(_fts_phrase, terms)))
        if sqlite_has_grams(alias):
            # Two terms' grams in one AND: FTS5 intersects the lists, instead of checking each trigram match of one
            # term for the other (docs/decisions/0013-merchant-search-reads.md).
            parts = [_gram_query(t) for t in terms]
            return FtsMatch("merchant_product_grams", (" AND " if every else " OR ").join(f"({p})" for p in parts))
        return None

    def _contains(self, terms: list[str], *, every: bool) -> Q:
        return Q(*(Q(search_key__contains=t) for t in terms), _connector=Q.AND if every else Q.OR)

    def _condition(self, terms: list[str], *, every: bool) -> Q:
        """Keys holding every (or any) term, in the form PostgreSQL's indexes serve (LIKE through pg_trgm, the gram
        array through its GIN index); elsewhere, and with `indexed=False`, a scan."""
        if not (self.indexed and has_trigram_indexes(connection)):
            return self._contains(terms, every=every)
        if any(len(t) >= TRIGRAM for t in terms):
            # LIKE '%…%' through pg_trgm; shorter terms beside a long one only filter the rows it finds (with the gram
            # array too, the planner may compute it per row).
            return self._contains(terms, every=every)
        each = []
        for term in terms:
            each.append(Q(short_grams_hold(term)) & Q(search_key__contains=term))
        return Q(*each, _connector=Q.AND if every else Q.OR)


class MeilisearchSearch:
    """The official `meilisearch` client against index `MEILISEARCH_INDEX`, Japanese locale."""

    name = "meilisearch"

    def search(self, query: str, *, limit: int) -> list[int]:
        from . import meili

        return meili.search_ids(query, limit=limit)

    def products(self, query: str, *, limit: int) -> list[Product]:
        return products_in_order(ids=self.search(query, limit=limit))


def get_backend() -> SearchBackend:
    return MeilisearchSearch() if settings.MEILISEARCH_URL else DatabaseSearch()
