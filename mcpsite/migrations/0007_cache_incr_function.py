"""PostgreSQL: the database cache's increment (rate-limit counters) as one stored function, one round trip.

AtomicDatabaseCache.incr took a transaction of a locking SELECT and an UPDATE (four round trips with BEGIN and
COMMIT) on every call's path. `mcpsite_cache_incr` is one UPDATE: PostgreSQL locks the row it updates, and a
concurrent increment waiting on that lock re-reads the committed value (READ COMMITTED), so none is lost.
Values are Django's pickles, base64; `mcpsite_pickled_int` reads the integer pickles Python writes (protocols 0
to 5, up to 32 bits) and NULL for anything else, which the cache then increments in Python as before. The new
value is written as a protocol-0 pickle (`I<n>\\n.`), which pickle.loads reads. SQLite: nothing (no functions).
"""

from django.db import migrations

from mcpsite.core.migrations import RunSQLOn

PICKLED_INT = r"""
CREATE OR REPLACE FUNCTION mcpsite_pickled_int(value text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    b bytea := decode(value, 'base64');
    n int := length(b);
    i int := 0;
    op int;
BEGIN
    IF n >= 2 AND get_byte(b, 0) = 128 THEN i := 2; END IF;                -- PROTO
    IF n >= i + 9 AND get_byte(b, i) = 149 THEN i := i + 9; END IF;        -- FRAME
    IF n < i + 3 OR get_byte(b, n - 1) <> 46 THEN RETURN NULL; END IF;     -- ... STOP
    op := get_byte(b, i);
    IF op = 75 AND n = i + 3 THEN                                          -- BININT1
        RETURN get_byte(b, i + 1);
    ELSIF op = 77 AND n = i + 4 THEN                                       -- BININT2
        RETURN get_byte(b, i + 1) + 256 * get_byte(b, i + 2);
    ELSIF op = 74 AND n = i + 6 THEN                                       -- BININT (signed, 32 bits)
        RETURN get_byte(b, i + 1) + 256 * get_byte(b, i + 2) + 65536 * get_byte(b, i + 3)
            + 16777216::bigint * get_byte(b, i + 4) - CASE WHEN get_byte(b, i + 4) >= 128 THEN 4294967296 ELSE 0 END;
    ELSIF op = 73 AND i = 0 AND get_byte(b, n - 2) = 10 THEN              -- INT (protocol 0): I<digits>\n.
        IF convert_from(substring(b FROM 2 FOR n - 3), 'UTF8') !~ '^-?[0-9]{1,18}$' THEN RETURN NULL; END IF;
        IF convert_from(substring(b FROM 2 FOR n - 3), 'UTF8') ~ '^0[01]$' THEN RETURN NULL; END IF;  -- True/False
        RETURN convert_from(substring(b FROM 2 FOR n - 3), 'UTF8')::bigint;
    END IF;
    RETURN NULL;
END $$
"""

CACHE_INCR = r"""
CREATE OR REPLACE FUNCTION mcpsite_cache_incr(cache_table text, made_key text, delta bigint, now timestamptz)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    counted bigint;
BEGIN
    -- A counter is not worth waiting for the WAL flush (cache.commit_without_flush_wait): SET LOCAL.
    PERFORM set_config('synchronous_commit', 'off', true);
    EXECUTE format(
        'UPDATE %I SET value = encode(convert_to(''I'' || (mcpsite_pickled_int(value) + $2) || chr(10) || ''.'', '
        '''UTF8''), ''base64'') WHERE cache_key = $1 AND expires > $3 AND mcpsite_pickled_int(value) IS NOT NULL '
        'RETURNING mcpsite_pickled_int(value)',
        cache_table
    ) INTO counted USING made_key, delta, now;
    RETURN counted;  -- NULL: no live counter, or not an integer pickle this function reads
END $$
"""

DROP = [
    "DROP FUNCTION IF EXISTS mcpsite_cache_incr(text, text, bigint, timestamptz)",
    "DROP FUNCTION IF EXISTS mcpsite_pickled_int(text)",
]


class Migration(migrations.Migration):
    dependencies = [("mcpsite", "0006_toolcall_oauth_client_toolcall_user")]

    operations = [RunSQLOn("postgresql", [PICKLED_INT, CACHE_INCR], DROP)]
