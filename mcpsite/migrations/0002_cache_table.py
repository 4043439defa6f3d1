"""The database cache's table (rate-limit counters), so `migrate` alone gives a working server.

It was made by a separate `createcachetable` that only the Makefile ran: a site deployed with the standard
Django steps answered every tool call with "no such table: mcpsite_cache". The command is idempotent, so a
database where it already ran migrates unchanged.
"""

from django.core.management import call_command
from django.db import migrations


def create_cache_tables(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("mcpsite", "0001_initial")]

    operations = [migrations.RunPython(create_cache_tables, migrations.RunPython.noop)]
