"""PostgreSQL: the database cache's increment functions of migration 0007, created again where an earlier form of
migration 0009 dropped them. The release before the rate limiter's own tables calls `mcpsite_cache_incr` on every
request; a rolling upgrade from it keeps it serving until its last process is replaced (expand, then contract a
release later: docs/production.md, "Upgrades"). `CREATE OR REPLACE`: a no-op where they exist."""

import importlib

from django.db import migrations

from mcpsite.core.migrations import RunSQLOn

CACHE_FUNCTIONS = importlib.import_module("mcpsite.migrations.0007_cache_incr_function")


class Migration(migrations.Migration):
    dependencies = [("mcpsite", "0011_heartbeat")]

    operations = [
        RunSQLOn("postgresql", [CACHE_FUNCTIONS.PICKLED_INT, CACHE_FUNCTIONS.CACHE_INCR], migrations.RunSQL.noop)
    ]
