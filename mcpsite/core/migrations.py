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
