"""`customer_key`: `customer_name` folded by `mcpsite.core.text.search_key` for the staff's
search, filled in for the rows there are; a trigram index on PostgreSQL."""

from django.db import migrations

from mcpsite.core.migrations import folded_key_column


class Migration(migrations.Migration):
    dependencies = [
        ("cinema", "0005_theater_constraint_messages"),
    ]

    operations = folded_key_column(
        "cinema.Reservation",
        "customer_key",
        source="customer_name",
        verbose_name="customer name (folded)",
        trigram=True,
    )
