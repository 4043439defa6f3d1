"""PostgreSQL: tell the planner what `merchant_short_grams` costs, so that no plan computes it row by row.

It builds a key's gram array: about 0.4 ms a row (EXPLAIN ANALYZE), where a `strpos` check is microseconds. At
the default cost of a SQL function (100 operators) the planner put it in a walk's filter (45 ms for 抹茶 on 100,000
products). The GIN index over it answers `@>` without it; only rows whose key changes compute it again.
"""

from django.db import migrations


def _cost(cost: int):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"ALTER FUNCTION merchant_short_grams(text) COST {cost}")

    return run


class Migration(migrations.Migration):
    dependencies = [("merchant", "0004_product_name_key")]
    operations = [migrations.RunPython(_cost(100_000), _cost(100))]
