"""Cinema records: films, theaters and their seats, shows (schedules), reservations.

Public ids follow the seed (`m001`, `t01`, `s001`, `r20260220001`). The database itself refuses
two active reservations of one seat in one show (a partial unique index on SQLite and PostgreSQL).
"""

from __future__ import annotations

import datetime
import string
import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from mcpsite.core.search import with_update_fields
from mcpsite.core.text import search_key
from mcpsite.formats import day, time_of_day

ROW_LETTERS = string.ascii_uppercase  # rows A…Z
MAX_COLUMNS = 99


def seat_order(label: str) -> tuple[str, int]:
    """The seat map's order of a seat label: by row, then by seat number (A2 before A10). Every list of a
    reservation's seats (reserve_seats, get_reservation_details, cancel_reservation, the admin) is in this order."""
    return label[:1], int(label[1:]) if label[1:].isdigit() else 0


class PublicIdModel(models.Model):
    """A seed-style public id (`m001`) derived from the primary key when none is given."""

    id_prefix = ""
    id_width = 3

    public_id = models.CharField(_("public ID"), max_length=20, unique=True, editable=False)

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if self.public_id:
            return super().save(*args, **kwargs)
        # A unique placeholder first: the pk (hence the id) is only known after the insert.
        self.public_id = f"~{uuid.uuid4().hex[:16]}"
        super().save(*args, **kwargs)
        self.public_id = f"{self.id_prefix}{self.pk:0{self.id_width}d}"
        type(self)._default_manager.filter(pk=self.pk).update(public_id=self.public_id)
        return None


class Movie(PublicIdModel):
    id_prefix = "m"

    title = models.CharField(_("title"), max_length=200)
    # The title normalised for 表記揺れ-tolerant search (see cinema.search.normalize).
    title_key = models.CharField(_("search key"), max_length=200, editable=False, db_index=True)
    genre = models.CharField(_("genre"), max_length=50, blank=True)
    duration = models.PositiveIntegerField(_("running time"), help_text=_("Running time in minutes."))
    rating = models.DecimalField(_("rating"), max_digits=2, decimal_places=1, help_text=_("1.0 to 5.0."))
    description = models.TextField(_("description"), blank=True)
    release_date = models.DateField(_("release date"), null=True, blank=True)

    class Meta:
        ordering = ["public_id"]
        verbose_name = _("movie")
        verbose_name_plural = _("movies")
        constraints = [
            models.CheckConstraint(condition=Q(rating__gte=1) & Q(rating__lte=5), name="cinema_movie_rating_1_5"),
            models.CheckConstraint(condition=Q(duration__gte=1), name="cinema_movie_duration_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} {self.title}"

    def save(self, *args, **kwargs):
        from .search import normalize

        self.title_key = normalize(self.title)[:200]
        return super().save(*args, **kwargs)


class Theater(PublicIdModel):
    id_prefix = "t"
    id_width = 2

    name = models.CharField(_("name"), max_length=100, unique=True)
    rows = models.PositiveSmallIntegerField(_("rows"), help_text=_("Rows A… (at most 26)."))
    columns = models.PositiveSmallIntegerField(
        _("columns"), help_text=format_lazy(_("Seats per row, 1… (at most {max})."), max=MAX_COLUMNS)
    )

    class Meta:
        ordering = ["public_id"]
        verbose_name = _("theater")
        verbose_name_plural = _("theaters")
        constraints = [
            models.CheckConstraint(
                condition=Q(rows__gte=1) & Q(rows__lte=26),
                name="cinema_theater_rows_1_26",
                violation_error_message=_("Rows must be between 1 and 26."),
            ),
            models.CheckConstraint(
                condition=Q(columns__gte=1) & Q(columns__lte=MAX_COLUMNS),
                name="cinema_theater_columns_range",
                violation_error_message=_("Columns must be between 1 and 99."),  # MAX_COLUMNS
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Seat(models.Model):
    theater = models.ForeignKey(Theater, on_delete=models.CASCADE, related_name="seats", verbose_name=_("theater"))
    row = models.CharField(_("row"), max_length=1)
    column = models.PositiveSmallIntegerField(_("column"))
    label = models.CharField(_("seat"), max_length=4, help_text=_("Row letter and column, e.g. A1."))
    blocked = models.BooleanField(
        _("blocked"), default=False, help_text=_("Not for sale (broken, wheelchair space, …).")
    )

    class Meta:
        ordering = ["theater", "row", "column"]
        verbose_name = _("seat")
        verbose_name_plural = _("seats")
        constraints = [
            models.UniqueConstraint(fields=["theater", "label"], name="cinema_seat_unique_label"),
            models.UniqueConstraint(fields=["theater", "row", "column"], name="cinema_seat_unique_position"),
            models.CheckConstraint(condition=Q(column__gte=1), name="cinema_seat_column_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.theater_id}:{self.label}"


class Schedule(PublicIdModel):
    """One show of a film in a theater (times are local, Asia/Tokyo)."""

    id_prefix = "s"

    movie = models.ForeignKey(Movie, on_delete=models.PROTECT, related_name="schedules", verbose_name=_("movie"))
    theater = models.ForeignKey(Theater, on_delete=models.PROTECT, related_name="schedules", verbose_name=_("theater"))
    date = models.DateField(_("date"), db_index=True)
    start_time = models.TimeField(_("start time"))
    end_time = models.TimeField(
        _("end time"), blank=True, help_text=_("Left empty: start time plus the film's running time.")
    )

    class Meta:
        ordering = ["date", "start_time", "theater"]
        verbose_name = _("schedule")
        verbose_name_plural = _("schedules")
        constraints = [
            models.UniqueConstraint(fields=["theater", "date", "start_time"], name="cinema_schedule_one_show_per_slot"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} {day(self.date)} {time_of_day(self.start_time)}"

    def save(self, *args, **kwargs):
        self.end_time_fill()
        return super().save(*args, **kwargs)

    def end_time_fill(self) -> None:
        """An end time left empty: the start time plus the film's running time."""
        if self.end_time is None and self.start_time is not None and self.movie_id:
            start = datetime.datetime.combine(datetime.date(2000, 1, 1), self.start_time)
            self.end_time = (start + datetime.timedelta(minutes=self.movie.duration)).time()

    @property
    def starts_at(self) -> datetime.datetime:
        from django.utils import timezone

        return timezone.make_aware(datetime.datetime.combine(self.date, self.start_time))


class Reservation(models.Model):
    class Status(models.TextChoices):
        CONFIRMED = "confirmed", _("confirmed")
        CANCELLED = "cancelled", _("cancelled")

    class Source(models.TextChoices):
        CUSTOMER = "customer", _("customer (with password)")
        STAFF = "staff", _("staff (admin)")

    public_id = models.CharField(_("public ID"), max_length=20, unique=True, editable=False)
    schedule = models.ForeignKey(
        Schedule, on_delete=models.PROTECT, related_name="reservations", verbose_name=_("schedule")
    )
    customer_name = models.CharField(_("customer name"), max_length=100, blank=True)
    # The name folded by `search_key` (ﾃﾞﾓ, でも, デモ alike) for the staff's search; a trigram index on PostgreSQL.
    customer_key = models.TextField(_("customer name (folded)"), blank=True, editable=False, db_default="")
    # An argon2id hash (Django's hasher framework); the plain password is never stored or logged.
    password_hash = models.CharField(_("password hash"), max_length=200, editable=False)
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.CONFIRMED, db_index=True
    )
    reserved_at = models.DateTimeField(_("reserved at"), db_index=True)
    cancelled_at = models.DateTimeField(_("cancelled at"), null=True, blank=True)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("cancelled by"),
    )
    cancel_source = models.CharField(_("cancelled through"), max_length=10, choices=Source.choices, blank=True)

    class Meta:
        ordering = ["-reserved_at"]
        verbose_name = _("reservation")
        verbose_name_plural = _("reservations")
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["confirmed", "cancelled"]), name="cinema_res_status_valid"),
            models.CheckConstraint(
                condition=(Q(status="confirmed", cancelled_at__isnull=True, cancel_source=""))
                | (Q(status="cancelled", cancelled_at__isnull=False) & ~Q(cancel_source="")),
                name="cinema_res_cancellation_consistent",
            ),
        ]

    def __str__(self) -> str:
        return self.public_id

    def save(self, *args, **kwargs):
        self.customer_key = search_key(self.customer_name)
        super().save(*args, **with_update_fields(kwargs, "customer_key"))


class ReservedSeat(models.Model):
    """A seat of a reservation; `active` is cleared when the reservation is cancelled."""

    reservation = models.ForeignKey(
        Reservation, on_delete=models.CASCADE, related_name="seats", verbose_name=_("reservation")
    )
    # Denormalised from the reservation so the partial unique index can cover it.
    schedule = models.ForeignKey(
        Schedule, on_delete=models.PROTECT, related_name="reserved_seats", verbose_name=_("schedule")
    )
    seat = models.ForeignKey(Seat, on_delete=models.PROTECT, related_name="reservations", verbose_name=_("seat"))
    active = models.BooleanField(_("active"), default=True)

    class Meta:
        verbose_name = _("reserved seat")
        verbose_name_plural = _("reserved seats")
        constraints = [
            # The guarantee against double booking: at most one active reservation per seat and show.
            models.UniqueConstraint(
                fields=["schedule", "seat"], condition=Q(active=True), name="cinema_one_active_booking_per_seat"
            ),
            models.UniqueConstraint(fields=["reservation", "seat"], name="cinema_reserved_seat_once"),
        ]

    def __str__(self) -> str:
        return f"{self.reservation_id}:{self.seat_id}"


class ShowSeatBlock(models.Model):
    """A seat not for sale at one show (a seat broken for one screening, a seat held for a guest), beside the
    theater-wide `Seat.blocked`; the tools treat both alike.

    The database keeps (migration 0006, on PostgreSQL and SQLite): the seat is a seat of the show's theater, a seat
    an active reservation of the show holds is never blocked for it, a blocked seat is never booked, and a show with
    blocked seats keeps its theater."""

    schedule = models.ForeignKey(
        Schedule, on_delete=models.CASCADE, related_name="seat_blocks", verbose_name=_("schedule")
    )
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="show_blocks", verbose_name=_("seat"))
    blocked_at = models.DateTimeField(_("blocked at"))
    blocked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("blocked by"),
    )

    class Meta:
        verbose_name = _("seat blocked for a show")
        verbose_name_plural = _("seats blocked for a show")
        constraints = [
            models.UniqueConstraint(fields=["schedule", "seat"], name="cinema_show_seat_block_once"),
        ]

    def __str__(self) -> str:
        return f"{self.schedule_id}:{self.seat_id}"


def reservation_number(day: datetime.date, n: int) -> str:
    """The reservation number of the `n`th booking of `day`: r20260220001, at least three digits (r202602201000).

    Written once more, in SQL, by migration 0003's `cinema_reservation_id_next` (frozen with the migration);
    cinema/tests/test_services.py holds the two equal."""
    return f"r{day:%Y%m%d}{n:03d}"


class ReservationDayCounter(models.Model):
    """The last sequence number handed out for reservation ids of one day (`reservation_number`)."""

    day = models.DateField(_("day"), primary_key=True)
    last = models.PositiveIntegerField(_("last number"), default=0)

    class Meta:
        verbose_name = _("reservation day counter")
        verbose_name_plural = _("reservation day counters")

    def __str__(self) -> str:
        return f"{self.day}: {self.last}"
