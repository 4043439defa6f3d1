"""`search_key`: `description` folded by `mcpsite.core.text.search_key` for the staff's
search, filled in for the rows there are; a trigram index on PostgreSQL."""

from django.db import migrations

from mcpsite.core.migrations import folded_key_column


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0005_merge_day_totals_exact_range"),
    ]

    operations = folded_key_column(
        "ledger.JournalEntry", "search_key", source="description", verbose_name="description (folded)", trigram=True
    )
