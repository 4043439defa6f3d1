"""PostgreSQL's candidate reads for `search.DatabaseSearch`: the first products by id holding the terms.

The GIN indexes (pg_trgm for terms of 3+ characters, the gram index of migration 0002 for shorter ones) give a term's
matches in no order, and the candidates are the first `cap` by id. Left to itself the planner walks the primary key
checking every row, or reads and sorts every match of a common term, or computes the gram array of each row it checks
(docs/decisions/0013-merchant-search-reads.md). So the read is chosen here, from the statistics ANALYZE keeps of the
gram index (`GramStatistics`: how many products hold each common gram), and each read is written so that only its own
plan fits it:

- common terms (many matches): a walk in id order that checks each row and stops at the cap;
- rarer ones: the index, within windows of ids sized to hold about the cap (a window's matches are the only rows
  read), the next window larger when one holds too few; the rarest in one read of every match.

Estimates are a sample and take terms as independent (terms that go together are held more often than estimated):
each read is bounded, and past the bound the other read answers, so a wrong estimate costs time, never results.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

from django.db import connection
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from ..models import Product
from ..search_keys import TRIGRAM, term_grams

# A candidate row: (id, folded name, terms matched, listed fields...), as search.ROW_FIELDS says.
Row = tuple

# What each read costs, in rows checked by a walk in id order: one match read through an index (its page is read at
# random), one entry of an index's posting lists, one id of a window (docs/decisions/0013-merchant-search-reads.md).
INDEX_MATCH = 3.5
POSTING = 0.05
WINDOW_ID = 0.1
# A window of ids is sized to hold WINDOW_MARGIN × the cap, by the estimate; the next one is WINDOW_GROWTH times
# larger. A read of every match stops past INDEX_READ_MARGIN times the estimate (at least INDEX_READ_MIN), a walk
# after WALK_MARGIN times the rows it expects to check; past either, the other read answers.
WINDOW_MARGIN = 1.5
WINDOW_GROWTH = 4
INDEX_READ_MARGIN = 4
INDEX_READ_MIN = 1000
WALK_MARGIN = 4
# How long a process keeps the statistics: ANALYZE (autovacuum's, or seed_merchant's) changes them rarely.
STATISTICS_SECONDS = 60

_HELD = "strpos(p.search_key, %s) > 0"
_GRAMS = "merchant_short_grams(p.search_key) @> %s::text[]"


class GramStatistics(NamedTuple):
    """What PostgreSQL's ANALYZE keeps of the gram index: the share of products holding each of its most common
    grams (`pg_stats.most_common_elems`), and the products' count and id range."""

    total: float
    first_id: int
    last_id: int
    shares: dict[str, float]
    rarest: float  # the least common kept gram's share; a gram not kept is rarer

    def share(self, gram: str) -> float:
        """The share of products holding `gram`; one not kept counts as half the rarest kept (as the planner does)."""
        return self.shares.get(gram, self.rarest / 2)

    def keys(self, term: str) -> list[str]:
        """The grams the gram index is asked for to find `term`: its rarest one (the term is held at most as often),
        or all of them without statistics. One posting list is read instead of each gram's, and the planner's own
        estimate stays near the matches: asked for every gram, it expects too few rows and reads every match instead
        of those in the window of ids (docs/decisions/0013-merchant-search-reads.md)."""
        grams = term_grams(term)
        return [min(grams, key=self.share)] if self.shares else grams

    def matches(self, terms: list[str], *, every: bool) -> float | None:
        """About how many products hold every (or any) term; None without statistics (never analysed).

        A term is held at most as often as its rarest gram; terms are taken as independent.
        """
        if not self.shares or self.total <= 0:
            return None
        each = [min(map(self.share, term_grams(t))) for t in terms]
        return (math.prod(each) if every else min(1.0, sum(each))) * self.total


NO_STATISTICS = GramStatistics(0, 0, 0, {}, 0.0)
_statistics: dict[str, tuple[float, GramStatistics]] = {}


def gram_statistics() -> GramStatistics:
    """The current connection's `GramStatistics`, read at most once per STATISTICS_SECONDS."""
    alias, now = connection.alias, time.monotonic()
    kept = _statistics.get(alias)
    if kept is not None and now - kept[0] < STATISTICS_SECONDS:
        return kept[1]
    table = Product._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.reltuples, (SELECT min(id) FROM {table}), (SELECT max(id) FROM {table}), "  # noqa: S608 (our names)
            "s.most_common_elems::text::text[], s.most_common_elem_freqs FROM pg_class c "
            "LEFT JOIN pg_stats s ON s.schemaname = current_schema() AND s.tablename = %s "
            "WHERE c.oid = %s::regclass",
            ["merchant_product_short_grams", table],
        )
        total, first_id, last_id, grams, shares = cursor.fetchone()
    if grams and first_id is not None:
        # most_common_elem_freqs ends with the least and the greatest share, then the share of NULL elements.
        statistics = GramStatistics(total, first_id, last_id, dict(zip(grams, shares, strict=False)), shares[-3])
    else:
        statistics = NO_STATISTICS
    _statistics[alias] = (now, statistics)
    return statistics


def _like_escape(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class Candidates:
    """The candidate rows of the active in-stock products whose key holds every (or any) term, in id order, at
    most `cap`; `columns` lists what a row holds after (id, name key, matched)."""

    def __init__(self, terms: list[str], *, every: bool, cap: int, matched: int, columns: str):
        self.terms, self.every, self.cap, self.matched, self.columns = terms, every, cap, matched, columns
        self.statistics = NO_STATISTICS

    def rows(self) -> list[Row]:
        self.statistics = statistics = gram_statistics()
        estimate = statistics.matches(self.terms, every=self.every)
        if estimate is None:  # never analysed: a small catalogue, or a fresh one
            return self._indexed(bound=None)[0]
        read, span = self._plan(statistics, max(estimate, 1.0))
        if read == "walk":
            rows = self._walk(products=math.ceil(WALK_MARGIN * self.cap * statistics.total / estimate))
            # The walk reads in id order: a full cap is the first `cap`; fewer, and the terms were rarer than thought.
            return rows if len(rows) == self.cap else self._indexed(bound=None)[0]
        if read == "windows":
            return self._windows(high=statistics.first_id - 1 + span, span=span, last=statistics.last_id)
        rows, complete = self._indexed(bound=max(math.ceil(INDEX_READ_MARGIN * estimate), INDEX_READ_MIN))
        return rows if complete else self._walk(products=None)

    def _plan(self, statistics: GramStatistics, estimate: float) -> tuple[str, int]:
        """The cheapest read by the costs above ("walk", "windows" or "index"), and the first window's span."""
        postings = POSTING * statistics.total * sum(statistics.share(g) for t in self.terms for g in statistics.keys(t))
        span = math.ceil(WINDOW_MARGIN * self.cap * (statistics.last_id - statistics.first_id + 1) / estimate)
        costs = {
            "walk": self.cap * statistics.total / estimate,
            "index": postings + INDEX_MATCH * estimate,
            "windows": postings + WINDOW_ID * span + INDEX_MATCH * WINDOW_MARGIN * self.cap,
        }
        return min(costs, key=costs.__getitem__), span

    def _select(self, source: str) -> tuple[str, list]:
        held = (" AND " if self.every else " OR ").join([_HELD] * len(self.terms))
        sql = (
            f"SELECT p.id, p.name_key, %s, {self.columns} FROM {source} p "  # noqa: S608 (our names)
            f"WHERE p.active AND p.inventory_count > 0 AND ({held})"
        )
        return sql, [self.matched, *self.terms]

    def _index(self) -> tuple[str, list]:
        """The condition a GIN index serves. All terms of 3+ characters: LIKE through pg_trgm. Otherwise the gram
        index alone, holding every term's grams: with both in one query, the recheck of the trigram matches computed
        the gram array of each. `strpos` decides (the grams may lie apart); no index serves it."""
        joiner = " AND " if self.every else " OR "
        if all(len(t) >= TRIGRAM for t in self.terms):
            return joiner.join(["p.search_key LIKE %s"] * len(self.terms)), [f"%{_like_escape(t)}%" for t in self.terms]
        if self.every:
            return _GRAMS, [[g for t in self.terms for g in self.statistics.keys(t)]]
        return " OR ".join([_GRAMS] * len(self.terms)), [self.statistics.keys(t) for t in self.terms]

    def _fetch(self, sql: str, args: list) -> list[Row]:
        with connection.cursor() as cursor:
            cursor.execute(sql, args)
            return cursor.fetchall()

    def _walk(self, *, products: int | None) -> list[Row]:
        """The products in id order, each checked, up to the cap; through the first `products` only, if given."""
        table = Product._meta.db_table
        source = table if products is None else f"(SELECT * FROM {table} ORDER BY id LIMIT {int(products)})"
        sql, args = self._select(source)
        return self._fetch(sql + " ORDER BY p.id LIMIT %s", [*args, self.cap])

    def _indexed(self, *, bound: int | None) -> tuple[list[Row], bool]:
        """Every match through the index, sorted: (the first `cap`, whether every match was read); past `bound`
        matches, if given, the read stops."""
        sql, args = self._select(Product._meta.db_table)
        index, index_args = self._index()
        limit = "" if bound is None else f" LIMIT {int(bound)}"
        # count(*) OVER (): how many matches the read found, before the cap.
        sql = f"SELECT *, count(*) OVER () FROM ({sql} AND ({index}) OFFSET 0{limit}) s ORDER BY s.id LIMIT %s"
        found = self._fetch(sql, [*args, *index_args, self.cap])
        complete = bound is None or not found or found[0][-1] < bound
        return [row[:-1] for row in found], complete

    def _windows(self, *, high: int, span: int, last: int) -> list[Row]:
        """Through the index, ids up to `high`, then the next window (WINDOW_GROWTH times larger), and so on until the
        cap. The first has no lower end (the statistics may be older than a row), the one reaching `last` (the
        highest id they saw) no upper end, and its bound is a filter: a bitmap of the primary key over the rest of
        the table cost more than its matches."""
        select, args = self._select(Product._meta.db_table)
        index, index_args = self._index()
        rows: list[Row] = []
        low: int | None = None
        while True:
            if high >= last:
                window, bounds = ("TRUE", []) if low is None else ("p.id + 0 > %s", [low])
            else:
                window, bounds = ("p.id <= %s", [high]) if low is None else ("p.id > %s AND p.id <= %s", [low, high])
            sql = f"{select} AND ({index}) AND {window} ORDER BY p.id LIMIT %s"
            rows += self._fetch(sql, [*args, *index_args, *bounds, self.cap - len(rows)])
            if len(rows) >= self.cap or high >= last:
                return rows
            span *= WINDOW_GROWTH
            low, high = high, high + span


def short_grams_hold(term: str) -> RawSQL:
    """True when the product's key holds every gram of the 1- or 2-character `term`, through the gram index of
    migration 0002 (`merchant_short_grams(search_key) @> ARRAY[term]`); `contains` still decides."""
    return RawSQL("merchant_short_grams(search_key) @> ARRAY[%s]::text[]", [term], output_field=BooleanField())
