"""The folded product name, stored beside the search key so the search re-ranks without folding names per query.

Added by ALTER TABLE ADD COLUMN on every database: Django's own AddField rebuilds the table on SQLite for a NOT NULL
column, and dropping the old table drops the triggers that keep the FTS5 indexes (migrations 0001, 0002) current.
The column's DEFAULT '' stays on SQLite (it cannot drop a default); Django always writes the value anyway."""

from django.db import migrations, models

from mcpsite.core.text import search_key as normalize

BATCH = 1000


def fill(apps, schema_editor):
    Product = apps.get_model("merchant", "Product")
    last_pk = 0
    while batch := list(Product.objects.filter(pk__gt=last_pk).order_by("pk").only("pk", "name")[:BATCH]):
        for product in batch:
            product.name_key = normalize(product.name)
        Product.objects.bulk_update(batch, ["name_key"])
        last_pk = batch[-1].pk


class Migration(migrations.Migration):
    dependencies = [("merchant", "0003_verbose_names_i18n")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="product",
                    name="name_key",
                    field=models.CharField(blank=True, editable=False, max_length=200, verbose_name="name key"),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE merchant_product ADD COLUMN name_key varchar(200) NOT NULL DEFAULT ''",
                    "ALTER TABLE merchant_product DROP COLUMN name_key",
                ),
            ],
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
