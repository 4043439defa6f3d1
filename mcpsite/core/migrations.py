"""The one migration operation for SQL that only one database backend runs (stored functions, triggers, extensions,
indexes Django cannot declare): `RunSQLOn`.

Migrations import this module, and a migration is frozen history: what `RunSQLOn` does with given arguments must
never change. Add an argument or a new operation instead (docs/decisions/0012-raw-sql.md).
"""

from collections.abc import Callable
from typing import Any

from django.db import migrations
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import ProjectState

VENDORS = ("postgresql", "sqlite")

type SQL = str | list[Any]  # RunSQL's forms: a script, or a list of statements (or (statement, params))


class RunSQLOn(migrations.RunSQL):
    """`RunSQL` run on databases of `vendor` only ("postgresql" or "sqlite", a backend's `connection.vendor`), and
    only where `when(connection)` holds if it is given (a compiled-in extension, say); a no-op everywhere else, in
    both directions. It changes no migration state.

    Pass a list of statements to run each as one `execute` (a function body with `;` inside stays whole); a single
    string is split into statements as `RunSQL` splits it.
    """

    def __init__(
        self,
        vendor: str,
        sql: SQL,
        reverse_sql: SQL | None = None,
        *,
        when: Callable[[BaseDatabaseWrapper], bool] | None = None,
        elidable: bool = False,
    ) -> None:
        if vendor not in VENDORS:
            raise ValueError(f"RunSQLOn: vendor must be one of {', '.join(VENDORS)}, not {vendor!r}")
        super().__init__(sql, reverse_sql, elidable=elidable)
        self.vendor = vendor
        self.when = when

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        name, args, kwargs = super().deconstruct()
        return name, [self.vendor, *args], {**kwargs, **({"when": self.when} if self.when is not None else {})}

    def applies_to(self, connection: BaseDatabaseWrapper) -> bool:
        """Whether this operation runs its SQL on `connection`."""
        return connection.vendor == self.vendor and (self.when is None or self.when(connection))

    def database_forwards(
        self, app_label: str, schema_editor: BaseDatabaseSchemaEditor, from_state: ProjectState, to_state: ProjectState
    ) -> None:
        if self.applies_to(schema_editor.connection):
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(
        self, app_label: str, schema_editor: BaseDatabaseSchemaEditor, from_state: ProjectState, to_state: ProjectState
    ) -> None:
        if self.applies_to(schema_editor.connection):
            super().database_backwards(app_label, schema_editor, from_state, to_state)

    def describe(self) -> str:
        return f"Raw SQL operation on {self.vendor} only"


def fold_rows(model: str, source: str, key: str, fold: Callable[[str], str]) -> migrations.RunPython:
    """A RunPython that writes `fold(source)` into `key` for every row of `model` ("app_label.ModelName"), in
    chunks: the backfill of a folded search key added beside the field it folds. Backwards, nothing to do."""

    def forwards(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
        rows = apps.get_model(model)._default_manager.using(schema_editor.connection.alias)
        chunk: list[Any] = []
        for row in rows.only("pk", source).iterator(chunk_size=FOLD_CHUNK):
            setattr(row, key, fold(getattr(row, source)))
            chunk.append(row)
            if len(chunk) == FOLD_CHUNK:
                rows.bulk_update(chunk, [key])
                chunk = []
        if chunk:
            rows.bulk_update(chunk, [key])

    return migrations.RunPython(forwards, migrations.RunPython.noop, elidable=True)


FOLD_CHUNK = 2000


def trigram_index(table: str, column: str) -> RunSQLOn:
    """A pg_trgm GIN index on `table`.`column` (PostgreSQL; `LIKE '%term%'` of 3+ characters uses it), named
    `<table>_<column>_trgm`."""
    name = f"{table}_{column}_trgm"
    return RunSQLOn(
        "postgresql",
        ["CREATE EXTENSION IF NOT EXISTS pg_trgm", f"CREATE INDEX {name} ON {table} USING gin ({column} gin_trgm_ops)"],
        [f"DROP INDEX IF EXISTS {name}"],
    )


def folded_key_column(model: str, name: str, *, source: str, verbose_name: str, trigram: bool) -> list[Any]:
    """The operations that add `name`, a text field holding `fold(source)` (`core.text.search_key`, as the model's
    save() writes it) to `model` ("app_label.ModelName"): the column (empty by default), its backfill, and with
    `trigram` a pg_trgm index on it. Migrations call it: what it does for given arguments never changes."""
    from django.db import models

    from .text import search_key

    app_label, model_name = model.split(".")
    table = f"{app_label}_{model_name.lower()}"
    field = models.TextField(blank=True, db_default="", editable=False, verbose_name=verbose_name)
    return [
        add_empty_text_column(model_name.lower(), name, table, field),
        fold_rows(model, source, name, search_key),
        *([trigram_index(table, name)] if trigram else []),
    ]


def add_empty_text_column(model_name: str, name: str, table: str, field: Any) -> migrations.SeparateDatabaseAndState:
    """`AddField(model_name, name, field)` for a text field with `db_default=""`, as one `ALTER TABLE … ADD COLUMN`
    on both databases: on SQLite, Django's AddField of a NOT NULL column copies the whole table into a new one,
    which fails when another table's trigger names it (the ledger's day totals) and rewrites every row."""
    return migrations.SeparateDatabaseAndState(
        state_operations=[migrations.AddField(model_name=model_name, name=name, field=field)],
        database_operations=[
            migrations.RunSQL(
                f"ALTER TABLE {table} ADD COLUMN {name} text DEFAULT '' NOT NULL",
                f"ALTER TABLE {table} DROP COLUMN {name}",
            )
        ],
    )
