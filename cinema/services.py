"""Writes: booking, cancelling, password checks with throttling, theater layouts.

Lock order (every write takes its locks in this order, so two writers never wait on each other
in a cycle): the reservation → the day's reservation-id counter → the seats (in seat order). A booking
takes no lock on the show: the partial unique index refuses a seat sold twice. Its seats hold the show
FOR KEY SHARE (their foreign key, migration 0004's trigger), which a show's seat blocks wait for: they lock
the show FOR UPDATE, and nothing else.
Passwords are hashed before any transaction opens, so locks are held for milliseconds, not for
the argon2 computation, and on the process's hashing threads (mcpsite.hashers), one per core.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from mcpsite.core.db import durable, has_stored_functions
from mcpsite.core.errors import Conflict, Forbidden, InvalidParams, Message, NotFound, RateLimited
from mcpsite.core.limits import give_back, over_limit
from mcpsite.core.text import search_key, trimmed
from mcpsite.hashers import password_check, password_hash

from . import sql
from .models import (
    MAX_COLUMNS,
    ROW_LETTERS,
    Reservation,
    ReservedSeat,
    Schedule,
    Seat,
    ShowSeatBlock,
    Theater,
    reservation_number,
    seat_order,
)
from .signals import seat_map_changed

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from mcpsite.models import ApiKey

logger = logging.getLogger(__name__)

SEAT_ID = re.compile(r"^([A-Z])([1-9][0-9]?)$")
PASSWORD_MIN_LENGTH = 6
PASSWORD_MAX_LENGTH = 128
CUSTOMER_NAME_MAX_LENGTH = 100
PASSWORD_THROTTLE_GROUP = "cinema.reservation_password"


# --- input rules (shared by the tools and the admin) ------------------------------------------


def seat_ids_validate(*, seats: list[str]) -> list[str]:
    """Seat ids normalised (NFKC, upper case: ａ１ → A1), in the caller's order; InvalidParams if bad."""
    if not seats:
        raise InvalidParams(data='seats must list at least one seat id, e.g. ["A1", "A2"]')
    cleaned: list[str] = []
    for raw in seats:
        label = unicodedata.normalize("NFKC", raw).strip().upper()
        if not SEAT_ID.match(label):
            shown = raw if len(raw) <= 20 else raw[:20] + "…"
            raise InvalidParams(
                data=f"seats: Invalid seat id {shown!r}: expected a row letter and a column number such as A1"
            )
        cleaned.append(label)
    duplicates = sorted(label for label, n in Counter(cleaned).items() if n > 1)
    if duplicates:
        raise InvalidParams(data=f"seats: Duplicate seat ids: {', '.join(duplicates)}")
    limit = settings.CINEMA_MAX_SEATS_PER_RESERVATION
    if len(cleaned) > limit:
        raise InvalidParams(data=f"seats: At most {limit} seats can be reserved at once ({len(cleaned)} requested)")
    return cleaned


def password_validate(*, password: str) -> None:
    # The message never repeats the password.
    if not PASSWORD_MIN_LENGTH <= len(password) <= PASSWORD_MAX_LENGTH:
        raise InvalidParams(
            data=f"reservation_password must be {PASSWORD_MIN_LENGTH} to {PASSWORD_MAX_LENGTH} characters long"
        )


def _customer_name_validate(name: str | None) -> str:
    try:
        return trimmed(
            name, limit=CUSTOMER_NAME_MAX_LENGTH, too_long="customer_name must be at most {limit} characters long"
        )
    except InvalidParams as exc:  # the seed's pattern: the kind's title in `message`, the detail in `data`
        raise InvalidParams(data=exc.message) from None


# --- booking ----------------------------------------------------------------------------------


# The booking's reads are two statements a booking (cinema/sql.py): the show and its seats before the hash, the
# seats again after it.


@dataclass(frozen=True, slots=True)
class _BookableSeat:
    pk: int
    label: str
    blocked: bool
    taken: bool  # an active booking of the show holds it


def _bookable(rows: Iterable[Sequence[Any]]) -> dict[str, _BookableSeat]:
    return {row[1]: _BookableSeat(row[0], row[1], bool(row[2]), bool(row[3])) for row in rows}


def _show_and_seats_for_booking(*, public_id: str, labels: list[str]) -> tuple[Schedule, dict[str, _BookableSeat]]:
    """The show (NotFound if there is none; its other fields load when used) and its seats `labels` with whether
    it has sold them, in one statement."""
    rows = sql.show_and_seats(public_id=public_id, labels=labels)
    if not rows:
        raise NotFound(data=f"Schedule {public_id} not found")
    pk, theater_id, date, start_time, theater_name = rows[0][:5]
    fields = Schedule._meta
    schedule = Schedule.from_db(
        connection.alias,
        ["id", "public_id", "theater_id", "date", "start_time"],
        [pk, public_id, theater_id, fields.get_field("date").to_python(date),
         fields.get_field("start_time").to_python(start_time)],
    )  # fmt: skip
    schedule.theater = Theater.from_db(connection.alias, ["id", "name"], [theater_id, theater_name])
    return schedule, _bookable(row[5:] for row in rows if row[5] is not None)


def _seats_for_booking(*, schedule: Schedule, labels: list[str]) -> dict[str, _BookableSeat]:
    """The show's seats `labels` and whether it has sold them, in one statement (after the hash)."""
    return _bookable(sql.seats(schedule_pk=schedule.pk, theater_pk=schedule.theater_id, labels=labels))


def _seats_in_order(*, schedule: Schedule, labels: list[str], seats: dict[str, _BookableSeat]) -> list[_BookableSeat]:
    """`seats` in the order of `labels`; InvalidParams for a seat the theater lacks or has blocked."""
    missing = [label for label in labels if label not in seats]
    if missing:
        raise InvalidParams(data=f"seats: No such seat in {schedule.theater.name}: {', '.join(missing)}")
    blocked = [label for label in labels if seats[label].blocked]
    if blocked:
        raise InvalidParams(data=f"seats: Seat {', '.join(blocked)} cannot be reserved (blocked)")
    return [seats[label] for label in labels]


def _taken_labels(*, schedule: Schedule, seats: list[_BookableSeat]) -> list[str]:
    """The labels of `seats` the show had sold when they were read."""
    return [seat.label for seat in seats if seat.taken]


def _conflict(labels: list[str]) -> Conflict:
    verb = "is" if len(labels) == 1 else "are"
    noun = "Seat" if len(labels) == 1 else "Seats"
    return Conflict(
        "Seat conflict",
        data={"conflicted_seats": labels, "message": f"{noun} {', '.join(labels)} {verb} already reserved"},
    )


def _check_bookable(schedule: Schedule, now: datetime.datetime) -> None:
    if schedule.starts_at <= now:
        raise InvalidParams(
            data=f"schedule_id: Schedule {schedule.public_id} started at {schedule.date} {schedule.start_time:%H:%M}; "
            "it can no longer be booked"
        )


def reservation_id_next(*, day: datetime.date) -> str:
    """The next reservation number of `day` (r20260220001, …); call it inside the transaction that uses it."""
    return reservation_number(day, sql.day_counter_next(day=day))


def _seat_map_changed_on_commit(schedule: Schedule) -> None:
    public_id = schedule.public_id
    transaction.on_commit(lambda: seat_map_changed.send(sender=Schedule, schedule_id=public_id), robust=True)


def _reservation_write(
    *, schedule: Schedule, seats: list[_BookableSeat], customer_name: str, password_hash: str, now: datetime.datetime
) -> Reservation:
    """Write the reservation, its number and its seats, all or nothing; IntegrityError for a seat sold meanwhile.

    Seats are inserted in seat order: two bookings inserting overlapping seats wait on each other in one order,
    never in a cycle (they could otherwise deadlock around midnight, when they increment different counters).
    """
    day = timezone.localdate(now)
    seat_ids = sorted(seat.pk for seat in seats)
    if has_stored_functions(connection):
        # One statement, its own transaction: the number, the reservation and its seats. The ORM's insert, bulk
        # insert, BEGIN and COMMIT would be four round trips inside the section every booking of the day waits for
        # (the counter's lock). Inside a caller's transaction a savepoint keeps a refused seat from breaking it.
        with transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext():
            return _reservation_insert_postgresql(
                schedule=schedule, seat_ids=seat_ids, customer_name=customer_name, password_hash=password_hash,
                now=now, day=day,
            )  # fmt: skip
    with durable():
        reservation = Reservation.objects.create(
            public_id=reservation_id_next(day=day),
            schedule=schedule,
            customer_name=customer_name,
            password_hash=password_hash,
            reserved_at=now,
        )
        ReservedSeat.objects.bulk_create(
            [ReservedSeat(reservation=reservation, schedule=schedule, seat_id=seat_id) for seat_id in seat_ids]
        )
        _seat_map_changed_on_commit(schedule)
    return reservation


def _reservation_insert_postgresql(
    *,
    schedule: Schedule,
    seat_ids: list[int],
    customer_name: str,
    password_hash: str,
    now: datetime.datetime,
    day: datetime.date,
) -> Reservation:
    status = Reservation.Status.CONFIRMED.value
    customer_key = search_key(customer_name)  # as Reservation.save() folds it
    pk, public_id = sql.reservation_insert_postgresql(
        schedule_pk=schedule.pk, seat_ids=seat_ids, customer_name=customer_name, customer_key=customer_key,
        password_hash=password_hash, status=status, now=now, day=day,
    )  # fmt: skip
    _seat_map_changed_on_commit(schedule)
    # The row as the statement wrote it, loaded as the ORM loads a fetched row (Model.from_db, in field order).
    row = {
        "id": pk,
        "public_id": public_id,
        "schedule_id": schedule.pk,
        "customer_name": customer_name,
        "customer_key": customer_key,
        "password_hash": password_hash,
        "status": status,
        "reserved_at": now,
        "cancelled_at": None,
        "cancelled_by_id": None,
        "cancel_source": "",
    }
    names = [field.attname for field in Reservation._meta.concrete_fields]
    reservation = Reservation.from_db(connection.alias, names, [row[name] for name in names])
    reservation.schedule = schedule
    return reservation


@dataclass(frozen=True, slots=True)
class Booking:
    reservation: Reservation
    seat_labels: list[str]


def reservation_create(
    *, schedule_id: str, seats: list[str], password: str, customer_name: str | None = None
) -> Booking:
    """Reserve all of `seats` for the show `schedule_id`, or none of them.

    Raises NotFound (unknown show), InvalidParams (bad seat ids, too many seats, unknown or
    blocked seats, a show that has started, a bad password or name) and Conflict 409 with
    every seat that is already taken.
    """
    labels = seat_ids_validate(seats=seats)
    password_validate(password=password)
    name = _customer_name_validate(customer_name)
    now = timezone.now()
    # Friendly checks first, so a doomed request costs no argon2 hash.
    schedule, seats_read = _show_and_seats_for_booking(public_id=schedule_id, labels=labels)
    _check_bookable(schedule, now)
    seat_rows = _seats_in_order(schedule=schedule, labels=labels, seats=seats_read)
    taken = _taken_labels(schedule=schedule, seats=seat_rows)
    if taken:
        raise _conflict(taken)
    hashed = password_hash(password)
    # The seats again after the hash (tens of milliseconds): a layout may have changed, or a seat been sold,
    # meanwhile; a sold one is the conflict it is before anything is written.
    seats_read = _seats_for_booking(schedule=schedule, labels=labels)
    seat_rows = _seats_in_order(schedule=schedule, labels=labels, seats=seats_read)
    taken = _taken_labels(schedule=schedule, seats=seat_rows)
    if taken:
        raise _conflict(taken)

    # No lock on the show: the partial unique index (one active booking per seat and show) is what refuses a
    # seat sold meanwhile, and the day's counter row, locked from its increment to the commit, already runs
    # the writes one at a time. A show lock (and the re-check under it) would add two round trips to that
    # one-at-a-time section, which every booking waits for.
    try:
        reservation = _reservation_write(
            schedule=schedule, seats=seat_rows, customer_name=name, password_hash=hashed, now=now
        )
    except IntegrityError:
        # The partial unique index refused a seat another booking took after our check, or the database a seat
        # blocked for the show meanwhile (migration 0006); nothing was written (the counter's increment is rolled
        # back too, so numbers stay gapless). Report it as the refusal it is.
        seats_read = _seats_for_booking(schedule=schedule, labels=labels)
        _seats_in_order(schedule=schedule, labels=labels, seats=seats_read)
        taken = _taken_labels(schedule=schedule, seats=[seats_read[label] for label in labels if label in seats_read])
        if not taken:
            raise
        raise _conflict(taken) from None
    logger.info("Reservation %s: %d seat(s) for %s", reservation.public_id, len(labels), schedule.public_id)
    return Booking(reservation, sorted(labels, key=seat_order))


# --- password checks --------------------------------------------------------------------------


def _password_throttle(*, reservation_id: str, api_key: ApiKey | None) -> dict[str, str]:
    """Attempts are counted per (API key, reservation): another key's wrong guesses never lock a caller out."""
    caller = f"key{api_key.pk}" if api_key is not None else "local"  # stdio: the trusted local process
    key = f"{caller}:{reservation_id}"
    return {"group": PASSWORD_THROTTLE_GROUP, "key": key, "rate": settings.CINEMA_PASSWORD_RATE}


def _take_attempt(throttle: dict) -> bool:
    """Count this attempt before any hashing, atomically in the shared rate limiter; False past the rate.

    Counting first is what bounds the hashing: of 80 guesses sent at once, only the first `limit` counted are
    checked (counting after a wrong password let every guess that read the count before it was checked).
    """
    return not over_limit(**throttle)


def reservation_authenticate(*, reservation_id: str, password: str, api_key: ApiKey | None = None) -> Reservation:
    """The reservation if `password` is its password.

    NotFound for an unknown id (as the seed says), Forbidden for a wrong password, RateLimited once
    CINEMA_PASSWORD_RATE attempts of this key for this reservation were wrong: refused without hashing, even
    the right password from this key until the window passes, so guessing cannot go on. The right password
    gives its attempt back, so it never uses up the allowance, and other keys have their own allowance, so no
    one can lock the owner out by guessing (reservation ids are sequential, hence easy to target).
    """
    from .selectors import reservation_get

    reservation = reservation_get(public_id=reservation_id)
    if reservation is None:
        raise NotFound(data=f"Reservation {reservation_id} not found")
    throttle = _password_throttle(reservation_id=reservation.public_id, api_key=api_key)
    if not _take_attempt(throttle):
        raise RateLimited(data="Too many wrong passwords for this reservation; try again later")
    if not password_check(password, reservation.password_hash):
        logger.info("Wrong password for reservation %s", reservation.public_id)
        raise Forbidden(data="Invalid reservation password")
    give_back(**throttle)
    return reservation


# --- cancelling -------------------------------------------------------------------------------


def reservation_cancel(*, reservation: Reservation, source: str, actor: User | None = None) -> Reservation:
    """Cancel a confirmed reservation and free its seats at once.

    Customers (source="customer") cannot cancel once the show has started; staff can (a show
    called off, a refund at the counter). Cancelling twice is a Conflict.
    """
    now = timezone.now()
    with durable():
        # Locks the reservation: of two simultaneous cancellations only one changes it.
        reservation = (
            Reservation.objects.select_for_update(of=("self",))
            .select_related("schedule__movie", "schedule__theater")
            .get(pk=reservation.pk)
        )
        if reservation.status == Reservation.Status.CANCELLED:
            raise Conflict(
                "Already cancelled",
                data=Message(gettext_noop("Reservation %(id)s is already cancelled"), id=reservation.public_id),
            )
        if source == Reservation.Source.CUSTOMER and reservation.schedule.starts_at <= now:
            raise Conflict(
                "Show already started",
                data=f"Schedule {reservation.schedule.public_id} has started; reservation "
                f"{reservation.public_id} can no longer be cancelled",
            )
        reservation.status = Reservation.Status.CANCELLED
        reservation.cancelled_at = now
        reservation.cancel_source = source
        reservation.cancelled_by = actor
        reservation.save(update_fields=["status", "cancelled_at", "cancel_source", "cancelled_by"])
        ReservedSeat.objects.filter(reservation=reservation).update(active=False)
        _seat_map_changed_on_commit(reservation.schedule)
    logger.info("Reservation %s cancelled by %s", reservation.public_id, source)
    return reservation


# --- shows -----------------------------------------------------------------------------------

SCHEDULE_SLOT_FIELDS = ("theater_id", "date", "start_time", "end_time")
# The database's names for the rules below (migration 0004, and the model's one show per slot).
SCHEDULE_RULES = (
    "cinema_schedule_no_overlap",
    "cinema_reserved_seat_in_theater",
    "cinema_schedule_one_show_per_slot",
    "cinema_schedule_blocks_keep_theater",
)


def show_span(*, date: datetime.date, start: datetime.time, end: datetime.time) -> tuple[datetime.datetime, ...]:
    """The show's [start, end) in local time; an end not after the start is on the next day (a late show).

    Migration 0004's exclusion constraint `cinema_schedule_no_overlap` writes the same span in SQL."""
    begins = datetime.datetime.combine(date, start)
    ends = datetime.datetime.combine(date, end)
    if end > start:
        return begins, ends
    return begins, ends + datetime.timedelta(days=1) if date < datetime.date.max else datetime.datetime.max


def _span_text(schedule: Schedule) -> str:
    return f"{schedule.public_id} {schedule.date} {schedule.start_time:%H:%M}–{schedule.end_time:%H:%M}"


def schedule_validate(*, schedule: Schedule, now: datetime.datetime | None = None) -> None:
    """Refuse a new or changed show (not yet saved) that breaks a show's rules, with a message staff can act on.

    - A show is never created, or moved, into the past (InvalidParams).
    - A show whose reservations hold seats keeps its theater, date and times (Conflict): the seats were sold for
      that theater at that time. Cancel the reservations first, or add a new show. A show whose cancelled
      reservations name seats keeps its theater (the history names that theater's seats), and so does a show with
      seats blocked for it.
    - Two shows in one theater never overlap (Conflict); back to back is fine.
    """
    schedule.end_time_fill()
    now = now or timezone.now()
    stored = None
    if schedule.pk is not None:
        stored = Schedule.objects.filter(pk=schedule.pk).values(*SCHEDULE_SLOT_FIELDS).first()
    moved = stored is None or any(stored[f] != getattr(schedule, f) for f in SCHEDULE_SLOT_FIELDS)
    if moved and schedule.starts_at <= now:
        raise InvalidParams(
            data=Message(
                gettext_noop("A show cannot start in the past (%(start)s)."),
                start=f"{schedule.starts_at:%Y-%m-%d %H:%M}",
            )
        )
    if stored is not None and moved:
        seats = ReservedSeat.objects.filter(schedule_id=schedule.pk)
        if seats.filter(active=True).exists():
            raise Conflict(
                data=Message(
                    gettext_noop(
                        "Show %(show)s has sold seats: its theater, date and times cannot change. Cancel its "
                        "reservations first, or add a new show."
                    ),
                    show=schedule.public_id,
                )
            )
        if stored["theater_id"] != schedule.theater_id and seats.exists():
            raise Conflict(
                data=Message(
                    gettext_noop(
                        "Show %(show)s has cancelled reservations that name seats of its theater: its theater "
                        "cannot change. Add a new show instead."
                    ),
                    show=schedule.public_id,
                )
            )
        if (
            stored["theater_id"] != schedule.theater_id
            and ShowSeatBlock.objects.filter(schedule_id=schedule.pk).exists()
        ):
            raise Conflict(
                data=Message(
                    gettext_noop(
                        "Show %(show)s has seats blocked for it: its theater cannot change. Unblock them first."
                    ),
                    show=schedule.public_id,
                )
            )
    clash = schedule_overlapping(schedule=schedule)
    if clash is not None:
        raise Conflict(
            data=Message(
                gettext_noop("The show overlaps show %(other)s in %(theater)s."),
                other=_span_text(clash),
                theater=schedule.theater.name,
            )
        )


def _day_before(day: datetime.date) -> datetime.date:
    return day - datetime.timedelta(days=1) if day > datetime.date.min else day


def _day_after(day: datetime.date) -> datetime.date:
    return day + datetime.timedelta(days=1) if day < datetime.date.max else day


def schedule_overlapping(*, schedule: Schedule) -> Schedule | None:
    """Another show in the theater whose span overlaps `schedule`'s, if there is one."""
    begins, ends = show_span(date=schedule.date, start=schedule.start_time, end=schedule.end_time)
    near = (
        Schedule.objects.filter(
            theater_id=schedule.theater_id,
            date__range=(_day_before(schedule.date), _day_after(schedule.date)),
        )
        .exclude(pk=schedule.pk)
        .order_by("date", "start_time")
    )
    for other in near:
        other_begins, other_ends = show_span(date=other.date, start=other.start_time, end=other.end_time)
        if other_begins < ends and begins < other_ends:
            return other
    return None


def schedule_save(*, schedule: Schedule, now: datetime.datetime | None = None) -> Schedule:
    """Save a new or changed show under `schedule_validate`'s rules (ApplicationError when refused).

    On PostgreSQL the database holds the same rules (migration 0004); the check here runs under a lock on the show
    so the message is the right one, and a show saved meanwhile in the same slot is refused by the constraint.
    """
    # Not durable: the admin calls this inside its own change-form transaction.
    existing = schedule.pk is not None
    with transaction.atomic():
        if existing:
            # Locks the show (FOR UPDATE): bookings in flight (their seats hold it FOR KEY SHARE on PostgreSQL) end
            # first and are seen by the check; new ones wait the few milliseconds of the save.
            Schedule.objects.select_for_update().filter(pk=schedule.pk).first()
        schedule_validate(schedule=schedule, now=now)
        try:
            with transaction.atomic():
                schedule.save()
        except IntegrityError as exc:
            if not any(name in str(exc) for name in SCHEDULE_RULES):
                raise
            raise Conflict(
                data=Message(
                    gettext_noop("Another show or booking changed this theater meanwhile; check and save again.")
                )
            ) from None
        if existing:
            _seat_map_changed_on_commit(schedule)
    return schedule


# --- seats blocked for one show ----------------------------------------------------------------

# The database's names for a block's rules (migration 0006).
SEAT_BLOCK_RULES = ("cinema_show_seat_block_in_theater", "cinema_show_seat_block_unsold")


def _show_lock(schedule: Schedule) -> Schedule:
    # Locks the show (FOR UPDATE): a booking in flight (its seats hold the show FOR KEY SHARE) ends first and is seen
    # by the check that follows; one that comes later waits for this transaction and then sees the blocks.
    return Schedule.objects.select_for_update(of=("self",)).select_related("theater").get(pk=schedule.pk)


def show_seat_blocks_validate(*, schedule: Schedule, seats: Iterable[str]) -> dict[str, int]:
    """The seats of `seats` not yet blocked for the show, {label: seat pk} in seat order; InvalidParams for a label
    its theater lacks, Conflict for a seat an active reservation of the show holds (cancel it first)."""
    labels = set(seats)
    in_theater = dict(Seat.objects.filter(theater_id=schedule.theater_id, label__in=labels).values_list("label", "pk"))
    unknown = sorted(labels - in_theater.keys(), key=seat_order)
    if unknown:
        raise InvalidParams(
            data=Message(
                gettext_noop("No such seat in %(theater)s: %(seats)s"),
                theater=schedule.theater.name,
                seats=", ".join(unknown),
            )
        )
    current = set(ShowSeatBlock.objects.filter(schedule=schedule).values_list("seat__label", flat=True))
    added = sorted(labels - current, key=seat_order)
    sold = sorted(
        ReservedSeat.objects.filter(schedule=schedule, active=True, seat__label__in=added).values_list(
            "seat__label", flat=True
        ),
        key=seat_order,
    )
    if sold:
        raise Conflict(
            data=Message(
                gettext_noop("These seats are reserved at show %(show)s; cancel their reservations first: %(seats)s"),
                show=schedule.public_id,
                seats=", ".join(sold),
            )
        )
    return {label: in_theater[label] for label in added}


def show_seat_blocks_set(
    *, schedule: Schedule, seats: Iterable[str], actor: User | None = None, now: datetime.datetime | None = None
) -> list[str]:
    """Make `seats` (labels of the show's theater) exactly the seats blocked for the show `schedule`, beside the
    theater's own blocks (`show_seat_blocks_validate`'s refusals); the labels blocked for it, in seat order.

    Bookings and blocks of one show never cross: this locks the show, which a booking's seats hold while it is in
    flight, and the database refuses the later one's row either way (migration 0006).
    """
    labels = set(seats)
    now = now or timezone.now()
    # Not durable: the admin calls this inside its own change-form transaction.
    with transaction.atomic():
        schedule = _show_lock(schedule)
        added = show_seat_blocks_validate(schedule=schedule, seats=labels)
        removed = ShowSeatBlock.objects.filter(schedule=schedule).exclude(seat__label__in=labels).delete()[0]
        try:
            with transaction.atomic():
                ShowSeatBlock.objects.bulk_create(
                    [
                        ShowSeatBlock(schedule=schedule, seat_id=pk, blocked_at=now, blocked_by=actor)
                        for pk in added.values()
                    ]
                )
        except IntegrityError as exc:
            if not any(name in str(exc) for name in SEAT_BLOCK_RULES):
                raise
            raise Conflict(
                data=Message(gettext_noop("A seat of this show was booked meanwhile; check and save again."))
            ) from None
        if added or removed:
            _seat_map_changed_on_commit(schedule)
    return sorted(labels, key=seat_order)


# --- theaters ---------------------------------------------------------------------------------


def theater_set_layout(
    *, theater: Theater, rows: int, columns: int, blocked: set[str] | frozenset[str] = frozenset()
) -> Theater:
    """Make the theater's seats exactly rows × columns (A1…), with `blocked` seats not for sale.

    Seats that hold reservations cannot be removed by shrinking the layout (InvalidParams).
    """
    wanted = theater_layout_validate(theater=theater, rows=rows, columns=columns, blocked=blocked)
    # Not durable: the admin calls this inside its own change-form transaction.
    with transaction.atomic():
        # Locks the theater: two layout edits never interleave their seat inserts and deletes.
        theater = Theater.objects.select_for_update().get(pk=theater.pk)
        existing = {s.label: s for s in theater.seats.all()}
        doomed = [s.pk for label, s in existing.items() if label not in wanted]
        if doomed and ReservedSeat.objects.filter(seat_id__in=doomed).exists():
            raise InvalidParams(
                data=Message(gettext_noop("Seats that hold reservations cannot be removed from the layout"))
            )
        Seat.objects.filter(pk__in=doomed).delete()
        Seat.objects.bulk_create(
            [
                Seat(theater=theater, row=row, column=column, label=label, blocked=label in blocked)
                for label, (row, column) in wanted.items()
                if label not in existing
            ]
        )
        Seat.objects.filter(theater=theater, label__in=wanted).exclude(label__in=blocked).update(blocked=False)
        Seat.objects.filter(theater=theater, label__in=blocked).update(blocked=True)
        theater.rows, theater.columns = rows, columns
        theater.save(update_fields=["rows", "columns"])
        # The seat map of every show still to come here changed with the layout (seats added, removed, blocked).
        for schedule in theater.schedules.filter(date__gte=timezone.localdate()).only("public_id"):
            _seat_map_changed_on_commit(schedule)
    return theater


def theater_layout_validate(
    *, theater: Theater | None, rows: int, columns: int, blocked: set[str] | frozenset[str] = frozenset()
) -> dict[str, tuple[str, int]]:
    """The wanted seats {label: (row, column)}; InvalidParams when the layout cannot be applied."""
    if not 1 <= rows <= len(ROW_LETTERS):
        raise InvalidParams(data=Message(gettext_noop("rows must be between 1 and %(max)d"), max=len(ROW_LETTERS)))
    if not 1 <= columns <= MAX_COLUMNS:
        raise InvalidParams(data=Message(gettext_noop("columns must be between 1 and %(max)d"), max=MAX_COLUMNS))
    wanted = {f"{ROW_LETTERS[r]}{c}": (ROW_LETTERS[r], c) for r in range(rows) for c in range(1, columns + 1)}
    unknown = sorted(set(blocked) - set(wanted))
    if unknown:
        raise InvalidParams(
            data=Message(gettext_noop("Blocked seats outside the layout: %(seats)s"), seats=", ".join(unknown))
        )
    if theater is not None and theater.pk is not None:
        sold = sorted(
            ReservedSeat.objects.filter(seat__theater=theater)
            .exclude(seat__label__in=wanted)
            .values_list("seat__label", flat=True)
            .distinct()
        )
        if sold:
            raise InvalidParams(
                data=Message(
                    gettext_noop("Seats that hold reservations cannot be removed from the layout: %(seats)s"),
                    seats=", ".join(sold[:10]),
                )
            )
    return wanted
