"""PostgreSQL: the database keeps a show's rules however its rows are written (ORM, `.update()`, raw SQL).

- `cinema_schedule_no_overlap`: two shows in one theater never overlap (an exclusion constraint over each show's
  span, btree_gist for the theater's equality). A show runs from its date and start time to its end time, on the
  next day when the end time is not after the start time (a late show ending after midnight): the rule
  `cinema.services.show_span` writes in Python, which is the check SQLite has.
- `cinema_reserved_seat_in_theater`: a reserved seat is a seat of its show's theater. A booking's seats are checked
  once per statement and lock their show's row as the foreign key does (FOR KEY SHARE); a change of the show's
  theater locks it FOR UPDATE, so it waits for a booking in flight (and then sees its seats) or the booking waits
  for the change (and then sees the new theater). Other edits of a show never wait for bookings.
- `cinema_schedule_theater_fixed`: a show whose reservations name seats keeps its theater.

SQLite has neither; there `cinema.services.schedule_save` keeps the same rules.
"""

from django.db import migrations

from mcpsite.core.migrations import RunSQLOn

SPAN = (
    "tsrange(date + start_time, date + end_time"
    " + CASE WHEN end_time <= start_time THEN interval '1 day' ELSE interval '0' END, '[)')"
)

CREATE = [
    "CREATE EXTENSION IF NOT EXISTS btree_gist",
    f"ALTER TABLE cinema_schedule ADD CONSTRAINT cinema_schedule_no_overlap"
    f" EXCLUDE USING gist (theater_id WITH =, ({SPAN}) WITH &&)",
    """
CREATE OR REPLACE FUNCTION cinema_reserved_seat_in_theater() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad record;
BEGIN
    -- Each show of the statement's rows, locked as its foreign key locks it (FOR KEY SHARE, which an edit of the
    -- show does not wait for): a change of its theater (FOR UPDATE, below) waits for this transaction.
    PERFORM 1 FROM cinema_schedule sc
     WHERE sc.id IN (SELECT DISTINCT schedule_id FROM new_rows) ORDER BY sc.id FOR KEY SHARE;
    SELECT n.schedule_id, n.seat_id INTO bad
      FROM new_rows n
      JOIN cinema_schedule sc ON sc.id = n.schedule_id
      JOIN cinema_seat se ON se.id = n.seat_id
     WHERE se.theater_id <> sc.theater_id
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'seat % is not in the theater of show %', bad.seat_id, bad.schedule_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'cinema_reserved_seat_in_theater';
    END IF;
    RETURN NULL;
END;
$$""",
    """
CREATE TRIGGER cinema_reserved_seat_in_theater_insert AFTER INSERT ON cinema_reservedseat
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cinema_reserved_seat_in_theater()""",
    """
CREATE TRIGGER cinema_reserved_seat_in_theater_update AFTER UPDATE ON cinema_reservedseat
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cinema_reserved_seat_in_theater()""",
    """
CREATE OR REPLACE FUNCTION cinema_schedule_theater_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Waits for bookings of the show still in flight (they hold it FOR KEY SHARE), then sees their seats.
    PERFORM 1 FROM cinema_schedule WHERE id = NEW.id FOR UPDATE;
    IF EXISTS (SELECT 1 FROM cinema_reservedseat WHERE schedule_id = NEW.id) THEN
        RAISE EXCEPTION 'show % has reserved seats; its theater cannot change', NEW.public_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'cinema_reserved_seat_in_theater';
    END IF;
    RETURN NEW;
END;
$$""",
    """
CREATE TRIGGER cinema_schedule_theater_fixed BEFORE UPDATE OF theater_id ON cinema_schedule
    FOR EACH ROW WHEN (OLD.theater_id IS DISTINCT FROM NEW.theater_id)
    EXECUTE FUNCTION cinema_schedule_theater_fixed()""",
]
DROP = [
    "DROP TRIGGER IF EXISTS cinema_schedule_theater_fixed ON cinema_schedule",
    "DROP FUNCTION IF EXISTS cinema_schedule_theater_fixed()",
    "DROP TRIGGER IF EXISTS cinema_reserved_seat_in_theater_update ON cinema_reservedseat",
    "DROP TRIGGER IF EXISTS cinema_reserved_seat_in_theater_insert ON cinema_reservedseat",
    "DROP FUNCTION IF EXISTS cinema_reserved_seat_in_theater()",
    "ALTER TABLE cinema_schedule DROP CONSTRAINT IF EXISTS cinema_schedule_no_overlap",
]


class Migration(migrations.Migration):
    dependencies = [("cinema", "0003_reservation_id_next_function")]

    operations = [RunSQLOn("postgresql", CREATE, DROP)]
