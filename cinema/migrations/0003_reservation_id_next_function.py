"""PostgreSQL: the day's reservation number allocated inside the reservation's own INSERT (see
services.reservation_create). SQLite has no stored functions; there the service increments the counter first."""

from django.db import migrations

from mcpsite.core.migrations import RunSQLOn

CREATE = """
CREATE OR REPLACE FUNCTION cinema_reservation_id_next(booking_day date) RETURNS text
LANGUAGE sql VOLATILE AS $$
    INSERT INTO cinema_reservationdaycounter (day, last) VALUES (booking_day, 1)
    ON CONFLICT (day) DO UPDATE SET last = cinema_reservationdaycounter.last + 1
    RETURNING 'r' || to_char(booking_day, 'YYYYMMDD') || lpad(last::text, greatest(3, length(last::text)), '0')
$$
"""
DROP = "DROP FUNCTION IF EXISTS cinema_reservation_id_next(date)"


class Migration(migrations.Migration):
    dependencies = [("cinema", "0002_verbose_names_i18n")]

    operations = [RunSQLOn("postgresql", [CREATE], [DROP])]
