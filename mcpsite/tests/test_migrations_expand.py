"""Upgrades without an outage: while a new release rolls out, the previous one keeps serving on the new schema, so a
migration never drops or renames what code may still use (expand, then contract a release later; docs/production.md,
"Upgrades"). A migration that must contract says so in a `contract` attribute naming what it removes and the release
that stopped using it; this test refuses any other."""

from __future__ import annotations

import re

import pytest
from django.db import connection, migrations
from django.db.migrations.loader import MigrationLoader

from mcpsite.core.migrations import RunSQLOn

PROJECT_APPS = {"mcpsite", "mcpsite_oauth", "cinema", "ledger", "geo", "merchant", "reminders"}
REMOVING = (
    migrations.RemoveField,
    migrations.DeleteModel,
    migrations.RenameField,
    migrations.RenameModel,
    migrations.AlterModelTable,
)
DROPPING_SQL = re.compile(r"\b(DROP\s+(FUNCTION|PROCEDURE|TABLE|VIEW|COLUMN|TYPE)|RENAME\s+(TO|COLUMN))\b", re.I)


def statements(sql) -> list[str]:
    if isinstance(sql, (list, tuple)):
        return [item[0] if isinstance(item, (list, tuple)) else item for item in sql]
    return [sql]


def removals(migration: migrations.Migration) -> list[str]:
    """What the migration's forward operations remove or rename that the previous release may use."""
    found = []
    for operation in migration.operations:
        if isinstance(operation, REMOVING):
            found.append(operation.describe())
        elif isinstance(operation, migrations.RunSQL):
            found += [m[0] for s in statements(operation.sql) if (m := DROPPING_SQL.search(str(s)))]
    return found


def refused(migration: migrations.Migration) -> list[str]:
    return [] if getattr(migration, "contract", "").strip() else removals(migration)


def test_no_migration_removes_what_the_previous_release_uses_without_saying_so():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    offending = {
        f"{app}.{name}": found
        for (app, name), migration in loader.disk_migrations.items()
        if app in PROJECT_APPS and (found := refused(migration))
    }
    assert offending == {}, "expand now, contract a release later (docs/production.md, Upgrades)"


def test_the_check_refuses_drops_and_removals_and_accepts_a_declared_contract():
    dropping = migrations.Migration("0099_drop_counter", "mcpsite")
    dropping.operations = [
        RunSQLOn("postgresql", ["DROP FUNCTION IF EXISTS mcpsite_cache_incr(text, text, bigint, timestamptz)"]),
        migrations.RemoveField("toolcall", "request_id"),
    ]
    assert refused(dropping) == ["DROP FUNCTION", "Remove field request_id from toolcall"]
    adding = migrations.Migration("0099_add", "mcpsite")
    adding.operations = [RunSQLOn("postgresql", ["CREATE OR REPLACE FUNCTION f() RETURNS int AS $$ SELECT 1 $$"])]
    assert refused(adding) == []
    dropping.contract = "mcpsite_cache_incr and ToolCall.request_id: unused since release 2026.12"
    assert refused(dropping) == []


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_previous_releases_counter_function_answers_on_the_new_schema():
    """What the previous release runs on every request (its rate counter in the database cache)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT mcpsite_cache_incr('mcpsite_cache', 'absent', 1, now())")
        assert cursor.fetchone() == (None,)  # no live counter: the caller sets it, as that release does
