"""merchant's SQL below the ORM (docs/decisions/0012-raw-sql.md), one module per backend.

- `sqlite`: the FTS5 reads of the database search; `postgresql`: its cost-chosen candidate reads over the trigram and
  gram GIN indexes. Kept because bench/bench_merchant.py misses its goal without them (README, Speed: search p95 ÷
  an exact lookup by SKU on 100,000 products, goal ≤ 5×), and FTS5 has no ORM expression.
- Here: the indexes' housekeeping after a bulk write and the catalog query of the system check, which the ORM has
  no expression for.

Tested on SQLite and PostgreSQL: merchant/tests/test_selectors.py, test_short_terms.py, test_commands.py.
"""

from __future__ import annotations

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper

from ..models import Product

GIN_INDEXES = ("merchant_product_search_key_trgm", "merchant_product_short_grams")


def fts_rebuild() -> None:
    """SQLite: rebuild the trigram FTS5 table from the products (after writes that bypassed its triggers)."""
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO merchant_product_fts(merchant_product_fts) VALUES ('rebuild')")


def statistics_refresh() -> None:
    """PostgreSQL: ANALYZE the products, and move the GIN indexes' pending entries into the indexes."""
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Product._meta.db_table}")
        for index in GIN_INDEXES:
            cursor.execute("SELECT gin_clean_pending_list(%s::regclass)", [index])


def trigram_ctype(db: BaseDatabaseWrapper) -> tuple[str, str] | None:
    """PostgreSQL: pg_trgm's trigrams of 東京 and the database's LC_CTYPE; None before pg_trgm is installed."""
    with db.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        if cursor.fetchone() is None:
            return None
        cursor.execute("SELECT show_trgm('東京'), current_setting('lc_ctype')")
        trigrams, ctype = cursor.fetchone()
    return trigrams, ctype
