"""`name_key`: `name` folded by `mcpsite.core.text.search_key` for the staff's
search, filled in for the rows there are."""

from django.db import migrations

from mcpsite.core.migrations import folded_key_column


class Migration(migrations.Migration):
    dependencies = [
        ("mcpsite", "0015_merge_staff_door"),
    ]

    operations = folded_key_column(
        "mcpsite.ApiKey", "name_key", source="name", verbose_name="name (folded)", trigram=False
    )
