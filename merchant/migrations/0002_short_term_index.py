"""An index for search terms of one or two characters, which the trigram index cannot serve.

SQLite: a contentless FTS5 table (detail=none: document ids only) of each key's 1- and 2-character grams,
as ASCII tokens made by the function `merchant_gram_tokens` (search_keys.gram_tokens, registered on every
connection by MerchantConfig; a write from a connection without it fails rather than leaving the index
stale). Its delete triggers recompute the old row's tokens, as contentless FTS5 requires (SQLite < 3.43 has no
contentless_delete): a change of gram_tokens must come with a migration that empties and refills the table
('delete-all', then the INSERT ... SELECT below). PostgreSQL: `merchant_short_grams(search_key)`, an immutable SQL function with the same grams,
under a GIN index; `merchant_short_grams(search_key) @> ARRAY[term]` uses it.
"""

from django.db import migrations

from mcpsite.core.migrations import RunSQLOn

TOKENS = "merchant_gram_tokens({}.search_key)"
SQLITE = [
    "CREATE VIRTUAL TABLE merchant_product_grams USING fts5(grams, content='', detail=none)",
    "CREATE TRIGGER merchant_product_grams_ai AFTER INSERT ON merchant_product BEGIN "
    f"INSERT INTO merchant_product_grams(rowid, grams) VALUES (new.id, {TOKENS.format('new')}); END",
    "CREATE TRIGGER merchant_product_grams_ad AFTER DELETE ON merchant_product BEGIN "
    "INSERT INTO merchant_product_grams(merchant_product_grams, rowid, grams) "
    f"VALUES ('delete', old.id, {TOKENS.format('old')}); END",
    "CREATE TRIGGER merchant_product_grams_au AFTER UPDATE OF search_key ON merchant_product BEGIN "
    "INSERT INTO merchant_product_grams(merchant_product_grams, rowid, grams) "
    f"VALUES ('delete', old.id, {TOKENS.format('old')}); "
    f"INSERT INTO merchant_product_grams(rowid, grams) VALUES (new.id, {TOKENS.format('new')}); END",
    f"INSERT INTO merchant_product_grams(rowid, grams) SELECT id, {TOKENS.format('merchant_product')} "
    "FROM merchant_product",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS merchant_product_grams_ai",
    "DROP TRIGGER IF EXISTS merchant_product_grams_ad",
    "DROP TRIGGER IF EXISTS merchant_product_grams_au",
    "DROP TABLE IF EXISTS merchant_product_grams",
]
POSTGRES = [
    r"""CREATE OR REPLACE FUNCTION merchant_short_grams(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT coalesce(array_agg(DISTINCT g), '{}') FROM (
            SELECT substr(t, i, n) AS g
            FROM generate_series(1, 2) AS n, generate_series(1, char_length(t) - n + 1) AS i
        ) AS grams WHERE g !~ '\s'
    $$""",
    "CREATE INDEX merchant_product_short_grams ON merchant_product USING gin (merchant_short_grams(search_key))",
]
POSTGRES_DROP = ["DROP INDEX IF EXISTS merchant_product_short_grams", "DROP FUNCTION IF EXISTS merchant_short_grams"]


def has_fts5(connection) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')")
        return bool(cursor.fetchone()[0])


class Migration(migrations.Migration):
    dependencies = [("merchant", "0001_initial")]
    operations = [
        RunSQLOn("sqlite", SQLITE, SQLITE_DROP, when=has_fts5),
        RunSQLOn("postgresql", POSTGRES, POSTGRES_DROP),
    ]
