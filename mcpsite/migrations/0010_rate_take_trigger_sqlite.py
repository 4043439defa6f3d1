"""On SQLite, a rate limiter take in one statement (mcpsite/core/limits.py, SqliteStore): the window's UPDATE, whose
trigger writes the admission's ring slot in the same statement. bench/bench_serving.py: the take was three
statements in a write transaction of its own on every MCP call (docs/decisions/0012-raw-sql.md)."""

from django.db import migrations

from mcpsite.core.migrations import RunSQLOn

# Only the take's UPDATE sets last_at (the give-back moves next_slot alone): the slot it admitted into is the
# window's old next_slot, at its new last_at.
RATE_TAKE_SLOT = """
CREATE TRIGGER mcpsite_rate_take_slot AFTER UPDATE OF last_at ON mcpsite_ratewindow
BEGIN
    INSERT INTO mcpsite_rateslot (bucket, slot, at) VALUES (NEW.bucket, OLD.next_slot, NEW.last_at)
    ON CONFLICT (bucket, slot) DO UPDATE SET at = excluded.at;
END
"""
DROP_RATE_TAKE_SLOT = "DROP TRIGGER IF EXISTS mcpsite_rate_take_slot"


class Migration(migrations.Migration):
    dependencies = [("mcpsite", "0009_rate_windows")]

    operations = [RunSQLOn("sqlite", [RATE_TAKE_SLOT], [DROP_RATE_TAKE_SLOT])]
