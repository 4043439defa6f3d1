"""The rate limiter's own tables (mcpsite/core/limits.py), and on PostgreSQL its take as one stored function.

Rate limits no longer count in the database cache, but the functions of migration 0007 (`mcpsite_cache_incr`,
`mcpsite_pickled_int`) stay: the previous release calls them on every request, and it keeps serving while this one
rolls out (expand, then contract a release later: docs/production.md, "Upgrades").
"""

from django.db import migrations, models

from mcpsite.core.migrations import RunSQLOn

RATE_TAKE = r"""
CREATE OR REPLACE FUNCTION mcpsite_rate_take(p_bucket text, p_limit integer, p_period integer,
                                             p_now double precision)
RETURNS double precision LANGUAGE plpgsql VOLATILE AS $$
-- One admission into the sliding window log of `p_bucket` at `p_now`: 0 when admitted, else the seconds until
-- the oldest of its last `p_limit` admissions leaves the window. The window's row lock serialises the takes.
DECLARE
    n integer;
    t double precision;
    oldest double precision;
BEGIN
    -- Counting is not worth waiting for the WAL flush (mcpsite.db.commit_without_flush_wait): SET LOCAL.
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT next_slot, greatest(last_at, p_now) INTO n, t FROM mcpsite_ratewindow WHERE bucket = p_bucket FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO mcpsite_ratewindow (bucket, next_slot, last_at, period) VALUES (p_bucket, 0, p_now, p_period)
        ON CONFLICT (bucket) DO NOTHING;
        SELECT next_slot, greatest(last_at, p_now) INTO n, t FROM mcpsite_ratewindow WHERE bucket = p_bucket
        FOR UPDATE;
    END IF;
    SELECT at INTO oldest FROM mcpsite_rateslot WHERE bucket = p_bucket AND slot = n;
    IF oldest > t - p_period THEN
        RETURN oldest + p_period - p_now;
    END IF;
    INSERT INTO mcpsite_rateslot (bucket, slot, at) VALUES (p_bucket, n, t)
    ON CONFLICT (bucket, slot) DO UPDATE SET at = EXCLUDED.at;
    UPDATE mcpsite_ratewindow SET next_slot = (n + 1) % p_limit, last_at = t WHERE bucket = p_bucket;
    RETURN 0;
END $$
"""
DROP_RATE_TAKE = "DROP FUNCTION IF EXISTS mcpsite_rate_take(text, integer, integer, double precision)"


class Migration(migrations.Migration):
    dependencies = [("mcpsite", "0008_toolcall_outcome_input_required")]

    operations = [
        migrations.CreateModel(
            name="RateSlot",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "bucket", "slot", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("bucket", models.CharField(max_length=200)),
                ("slot", models.PositiveIntegerField()),
                ("at", models.FloatField()),
            ],
        ),
        migrations.CreateModel(
            name="RateWindow",
            fields=[
                ("bucket", models.CharField(max_length=200, primary_key=True, serialize=False)),
                ("next_slot", models.PositiveIntegerField(default=0)),
                ("last_at", models.FloatField(help_text="Seconds since the epoch of the latest admission.")),
                ("period", models.PositiveIntegerField()),
            ],
        ),
        RunSQLOn("postgresql", [RATE_TAKE], [DROP_RATE_TAKE]),
    ]
