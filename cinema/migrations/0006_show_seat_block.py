"""Seats blocked for one show (`ShowSeatBlock`), and the database's rules for them, on PostgreSQL and SQLite:

- `cinema_show_seat_block_in_theater`: a blocked seat is a seat of the show's theater.
- `cinema_show_seat_block_unsold`: a seat an active reservation of the show holds is not blocked for it.
- `cinema_reserved_seat_not_blocked`: a seat blocked for a show is not booked for it.
- `cinema_schedule_blocks_keep_theater`: a show with blocked seats keeps its theater.

On PostgreSQL a block's statement locks its show FOR UPDATE, and a booking's seats lock it FOR KEY SHARE (as their
foreign key does, and migration 0004's trigger): the two wait for each other, and the one that waits sees the other's
rows once it ends. SQLite runs one write transaction at a time, so its checks see every committed row.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from mcpsite.core.migrations import RunSQLOn

POSTGRESQL = [
    """
CREATE OR REPLACE FUNCTION cinema_show_seat_block_valid() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad record;
BEGIN
    -- Each show of the statement's rows, locked FOR UPDATE: a booking of it in flight (FOR KEY SHARE) ends first
    -- and its seats are seen below; a booking that comes later waits for this transaction, then sees the block.
    PERFORM 1 FROM cinema_schedule sc
     WHERE sc.id IN (SELECT DISTINCT schedule_id FROM new_rows) ORDER BY sc.id FOR UPDATE;
    SELECT n.schedule_id, n.seat_id INTO bad
      FROM new_rows n
      JOIN cinema_schedule sc ON sc.id = n.schedule_id
      JOIN cinema_seat se ON se.id = n.seat_id
     WHERE se.theater_id <> sc.theater_id
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'seat % is not in the theater of show %', bad.seat_id, bad.schedule_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'cinema_show_seat_block_in_theater';
    END IF;
    SELECT n.schedule_id, n.seat_id INTO bad
      FROM new_rows n
      JOIN cinema_reservedseat r ON r.schedule_id = n.schedule_id AND r.seat_id = n.seat_id AND r.active
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'seat % is reserved at show %; it cannot be blocked for it', bad.seat_id, bad.schedule_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'cinema_show_seat_block_unsold';
    END IF;
    RETURN NULL;
END;
$$""",
    """
CREATE TRIGGER cinema_show_seat_block_valid_insert AFTER INSERT ON cinema_showseatblock
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cinema_show_seat_block_valid()""",
    """
CREATE TRIGGER cinema_show_seat_block_valid_update AFTER UPDATE ON cinema_showseatblock
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cinema_show_seat_block_valid()""",
    """
CREATE OR REPLACE FUNCTION cinema_reserved_seat_not_blocked() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad record;
BEGIN
    -- Each show of the statement's active rows, locked as its foreign key locks it (FOR KEY SHARE): a block of its
    -- seats in flight (FOR UPDATE, above) ends first and is seen below.
    PERFORM 1 FROM cinema_schedule sc
     WHERE sc.id IN (SELECT DISTINCT schedule_id FROM new_rows WHERE active) ORDER BY sc.id FOR KEY SHARE;
    SELECT n.schedule_id, n.seat_id INTO bad
      FROM new_rows n
      JOIN cinema_showseatblock b ON b.schedule_id = n.schedule_id AND b.seat_id = n.seat_id
     WHERE n.active
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'seat % is blocked at show %', bad.seat_id, bad.schedule_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'cinema_reserved_seat_not_blocked';
    END IF;
    RETURN NULL;
END;
$$""",
    """
CREATE TRIGGER cinema_reserved_seat_not_blocked_insert AFTER INSERT ON cinema_reservedseat
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cinema_reserved_seat_not_blocked()""",
    """
CREATE TRIGGER cinema_reserved_seat_not_blocked_update AFTER UPDATE ON cinema_reservedseat
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cinema_reserved_seat_not_blocked()""",
    """
CREATE OR REPLACE FUNCTION cinema_schedule_blocks_keep_theater() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM cinema_showseatblock WHERE schedule_id = NEW.id) THEN
        RAISE EXCEPTION 'show % has blocked seats; its theater cannot change', NEW.public_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'cinema_schedule_blocks_keep_theater';
    END IF;
    RETURN NEW;
END;
$$""",
    """
CREATE TRIGGER cinema_schedule_blocks_keep_theater BEFORE UPDATE OF theater_id ON cinema_schedule
    FOR EACH ROW WHEN (OLD.theater_id IS DISTINCT FROM NEW.theater_id)
    EXECUTE FUNCTION cinema_schedule_blocks_keep_theater()""",
]
POSTGRESQL_REVERSE = [
    "DROP TRIGGER IF EXISTS cinema_schedule_blocks_keep_theater ON cinema_schedule",
    "DROP FUNCTION IF EXISTS cinema_schedule_blocks_keep_theater()",
    "DROP TRIGGER IF EXISTS cinema_reserved_seat_not_blocked_update ON cinema_reservedseat",
    "DROP TRIGGER IF EXISTS cinema_reserved_seat_not_blocked_insert ON cinema_reservedseat",
    "DROP FUNCTION IF EXISTS cinema_reserved_seat_not_blocked()",
    "DROP TRIGGER IF EXISTS cinema_show_seat_block_valid_update ON cinema_showseatblock",
    "DROP TRIGGER IF EXISTS cinema_show_seat_block_valid_insert ON cinema_showseatblock",
    "DROP FUNCTION IF EXISTS cinema_show_seat_block_valid()",
]

# SQLite: each message starts with the rule's name, which is how the services recognise the refusal.
SQLITE_BLOCK_CHECKS = """
    SELECT RAISE(ABORT, 'cinema_show_seat_block_in_theater: the seat is not in the theater of the show')
     WHERE NOT EXISTS (SELECT 1 FROM cinema_seat se JOIN cinema_schedule sc ON sc.theater_id = se.theater_id
                        WHERE se.id = NEW.seat_id AND sc.id = NEW.schedule_id);
    SELECT RAISE(ABORT, 'cinema_show_seat_block_unsold: the seat is reserved at the show')
     WHERE EXISTS (SELECT 1 FROM cinema_reservedseat r
                    WHERE r.schedule_id = NEW.schedule_id AND r.seat_id = NEW.seat_id AND r.active);
"""
SQLITE_BOOKING_CHECK = """
    SELECT RAISE(ABORT, 'cinema_reserved_seat_not_blocked: the seat is blocked at the show')
     WHERE EXISTS (SELECT 1 FROM cinema_showseatblock b WHERE b.schedule_id = NEW.schedule_id AND b.seat_id = NEW.seat_id);
"""
SQLITE = [
    f"CREATE TRIGGER cinema_show_seat_block_valid_insert BEFORE INSERT ON cinema_showseatblock"
    f" BEGIN {SQLITE_BLOCK_CHECKS} END",
    f"CREATE TRIGGER cinema_show_seat_block_valid_update BEFORE UPDATE OF schedule_id, seat_id ON cinema_showseatblock"
    f" BEGIN {SQLITE_BLOCK_CHECKS} END",
    f"CREATE TRIGGER cinema_reserved_seat_not_blocked_insert BEFORE INSERT ON cinema_reservedseat WHEN NEW.active"
    f" BEGIN {SQLITE_BOOKING_CHECK} END",
    f"CREATE TRIGGER cinema_reserved_seat_not_blocked_update"
    f" BEFORE UPDATE OF schedule_id, seat_id, active ON cinema_reservedseat WHEN NEW.active"
    f" BEGIN {SQLITE_BOOKING_CHECK} END",
    """CREATE TRIGGER cinema_schedule_blocks_keep_theater BEFORE UPDATE OF theater_id ON cinema_schedule
    WHEN OLD.theater_id IS NOT NEW.theater_id
    BEGIN
    SELECT RAISE(ABORT, 'cinema_schedule_blocks_keep_theater: the show has blocked seats; its theater cannot change')
     WHERE EXISTS (SELECT 1 FROM cinema_showseatblock WHERE schedule_id = NEW.id);
    END""",
]
SQLITE_REVERSE = [
    "DROP TRIGGER IF EXISTS cinema_schedule_blocks_keep_theater",
    "DROP TRIGGER IF EXISTS cinema_reserved_seat_not_blocked_update",
    "DROP TRIGGER IF EXISTS cinema_reserved_seat_not_blocked_insert",
    "DROP TRIGGER IF EXISTS cinema_show_seat_block_valid_update",
    "DROP TRIGGER IF EXISTS cinema_show_seat_block_valid_insert",
]


class Migration(migrations.Migration):
    dependencies = [
        ("cinema", "0005_theater_constraint_messages"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ShowSeatBlock",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("blocked_at", models.DateTimeField(verbose_name="blocked at")),
                (
                    "blocked_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="blocked by",
                    ),
                ),
                (
                    "schedule",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="seat_blocks",
                        to="cinema.schedule",
                        verbose_name="schedule",
                    ),
                ),
                (
                    "seat",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="show_blocks",
                        to="cinema.seat",
                        verbose_name="seat",
                    ),
                ),
            ],
            options={
                "verbose_name": "seat blocked for a show",
                "verbose_name_plural": "seats blocked for a show",
                "constraints": [
                    models.UniqueConstraint(fields=("schedule", "seat"), name="cinema_show_seat_block_once")
                ],
            },
        ),
        RunSQLOn("postgresql", POSTGRESQL, POSTGRESQL_REVERSE),
        RunSQLOn("sqlite", SQLITE, SQLITE_REVERSE),
    ]
