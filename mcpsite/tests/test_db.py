"""Backend differences asked once: `RunSQLOn` (mcpsite/core/migrations.py), the one operation for SQL only one
database backend runs, and the named capabilities of mcpsite/core/db.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import connection
from django.db.migrations.state import ProjectState
from django.db.migrations.writer import MigrationWriter

from mcpsite.core.migrations import RunSQLOn

ROOT = Path(__file__).resolve().parents[2]
PROBE = "mcpsite_runsqlon_probe"


def _tables() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.table_names(cursor))


def _run(operation: RunSQLOn, *, forwards: bool = True) -> None:
    state = ProjectState()
    with connection.schema_editor() as editor:
        if forwards:
            operation.database_forwards("mcpsite", editor, state, state)
        else:
            operation.database_backwards("mcpsite", editor, state, state)


def _probe(vendor: str, **kwargs) -> RunSQLOn:
    return RunSQLOn(vendor, [f"CREATE TABLE {PROBE} (id integer)"], [f"DROP TABLE {PROBE}"], **kwargs)


@pytest.mark.django_db(transaction=True)  # SQLite's schema editor refuses to run inside the test's transaction
@pytest.mark.parametrize("vendor", ["postgresql", "sqlite"])
def test_it_runs_on_its_backend_only_both_ways(vendor):
    operation = _probe(vendor)
    _run(operation)
    try:
        assert (PROBE in _tables()) is (connection.vendor == vendor)
    finally:
        _run(operation, forwards=False)
    assert PROBE not in _tables()


@pytest.mark.django_db(transaction=True)
def test_when_false_makes_it_a_no_op():
    operation = _probe(connection.vendor, when=lambda conn: False)
    _run(operation)
    assert PROBE not in _tables()
    _run(operation, forwards=False)  # no DROP of a table that is not there


@pytest.mark.django_db(transaction=True)
def test_sqlmigrate_shows_the_sql_on_its_backend_only():
    operation = _probe("postgresql")
    state = ProjectState()
    with connection.schema_editor(collect_sql=True) as editor:
        operation.database_forwards("mcpsite", editor, state, state)
    assert bool(editor.collected_sql) is (connection.vendor == "postgresql")
    assert operation.describe() == "Raw SQL operation on postgresql only"


def test_it_changes_no_state_and_squashes():
    """A squashed or re-serialised migration keeps the vendor and the condition (deconstruct)."""
    state = ProjectState()
    _probe("sqlite").state_forwards("mcpsite", state)
    assert state.models == {}
    written, _ = MigrationWriter.serialize(_probe("sqlite", when=_tables))
    assert written.startswith("mcpsite.core.migrations.RunSQLOn(")
    assert "'sqlite'" in written and "when=mcpsite.tests.test_db._tables" in written


def test_an_unknown_vendor_is_refused():
    with pytest.raises(ValueError, match="postgresql, sqlite"):
        RunSQLOn("postgres", ["SELECT 1"])


def test_migrations_ask_no_vendor_themselves():
    """Backend-specific SQL in a migration goes through RunSQLOn: no RunPython that checks the vendor."""
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted(ROOT.glob("*/migrations/0*.py"))
        if re.search(r"\.vendor\b", path.read_text())
    ]
    assert offenders == []


def test_only_the_capabilities_module_asks_the_vendor():
    """Code outside mcpsite/core/db.py (and the migration operation) asks a named capability, not the vendor."""
    allowed = {"mcpsite/core/db.py", "mcpsite/core/migrations.py"}
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for top in ("mcpsite", "mcpsite_oauth", "cinema", "ledger", "geo", "merchant", "reminders")
        for path in sorted((ROOT / top).rglob("*.py"))
        if "migrations" not in path.parts and "tests" not in path.parts and str(path.relative_to(ROOT)) not in allowed
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\.vendor\b", line)
    ]
    assert offenders == []


@pytest.mark.django_db
def test_the_capabilities_of_each_backend():
    from mcpsite.core import db

    postgresql = connection.vendor == "postgresql"
    assert db.has_stored_functions(connection) is postgresql
    assert db.has_listen_notify(connection) is postgresql
    assert db.has_trigram_indexes(connection) is postgresql
    assert db.sums_decimals_exactly(connection) is postgresql
    assert db.has_one_writer(connection) is not postgresql
    assert db.has_python_functions(connection) is not postgresql
    assert db.has_fts5(connection) is not postgresql
    if db.has_stored_functions(connection):  # what the name promises is there
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_proc WHERE proname IN ('cinema_reservation_id_next', 'mcpsite_rate_take')"
            )
            assert cursor.fetchone() == (2,)


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_repeated_statement_is_planned_as_a_prepared_statement():
    """Server-side binding (settings.py, DATABASE_SERVER_SIDE_BINDING): from its second run on a connection, a
    statement runs as a prepared statement of that connection, its values bound by the server."""
    from cinema.models import Schedule

    assert connection.features.uses_server_side_binding
    shows = Schedule.objects.filter(public_id="S-none")
    for _ in range(3):
        list(shows.all())
    sql, params = shows.query.sql_with_params()
    assert params == ("S-none",)
    prepared = sql % "$1"  # as psycopg sends it
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT custom_plans + generic_plans FROM pg_prepared_statements WHERE statement = %s", [prepared]
        )
        assert cursor.fetchall() == [(2,)]  # the first run counted, the next two ran the prepared statement
