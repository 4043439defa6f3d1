"""Reads: films showing, schedules with live seat counts, seat maps, popularity, seat suggestions.

Every selector runs a fixed number of queries whatever the number of films, shows or seats
(asserted in tests/test_selectors.py): counts are aggregated in SQL, seat states joined in Python
from two flat queries.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, QuerySet, StringAgg, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from mcpsite.core.search import SearchHit, SearchQuery
from mcpsite.core.text import search_key
from mcpsite.formats import day, time_of_day

from .models import ROW_LETTERS, Movie, Reservation, ReservedSeat, Schedule, Seat, ShowSeatBlock, Theater, seat_order
from .search import match_score, normalize

# Recommendation rule (docs/apps/cinema.md), by the seed's 評価・ジャンル・人気度: a film is recommended when it is
# rated 4.5 or more; or rated 4.0 or more and either its popularity score that day is 80 or more, or its genre is
# among the week's best-selling genres (most seats booked for the shows of the 7 days ending on that day).
RECOMMEND_RATING = Decimal("4.5")
RECOMMEND_RATING_WITH_POPULARITY = Decimal("4.0")
RECOMMEND_POPULARITY = Decimal("80")
GENRE_WEEK_DAYS = 7


def theater_capacities(*, theater_ids: Iterable[int]) -> dict[int, int]:
    """Sellable (not blocked) seats per theater."""
    rows = (
        Seat.objects.filter(theater_id__in=set(theater_ids), blocked=False)
        .values("theater_id")
        .annotate(n=Count("id"))
        .values_list("theater_id", "n")
    )
    return dict(rows)


def _count_per_show(rows: QuerySet) -> Coalesce:
    """How many of `rows` (filtered on `schedule=OuterRef("pk")`) a show has, as one annotation: a subquery per show."""
    return Coalesce(Subquery(rows.order_by().values("schedule_id").annotate(n=Count("id")).values("n")), 0)


def show_blocked_expression() -> Coalesce:
    """A show's seats blocked for it alone (not already blocked for the theater), as one annotation: what its
    theater's capacity loses at that show."""
    return _count_per_show(ShowSeatBlock.objects.filter(schedule=OuterRef("pk"), seat__blocked=False))


# --- popularity -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PopularityRow:
    movie_pk: int
    movie_id: str
    title: str
    booked_seats_count: int
    capacity: int
    popularity_score: Decimal
    popularity_rank: int


def popularity_score(*, booked: int, top_booked: int, capacity: int) -> Decimal:
    """0–100: half relative to the day's best seller, half the film's own occupancy (docs/apps/cinema.md)."""
    if booked <= 0 or top_booked <= 0 or capacity <= 0:
        return Decimal("0.0")
    share = Decimal(booked) / Decimal(top_booked)
    occupancy = min(Decimal(1), Decimal(booked) / Decimal(capacity))
    return (100 * (share + occupancy) / 2).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def movie_popularity(*, start: datetime.date, end: datetime.date | None = None) -> list[PopularityRow]:
    """Films with a show from `start` to `end` (inclusive; one day without `end`), ranked by seats booked for
    those shows; a film's capacity is the sellable seats of all its shows in the period (three queries)."""
    end = start if end is None else end
    shows = list(
        Schedule.objects.filter(date__range=(start, end))
        .annotate(show_blocked=show_blocked_expression())
        .values_list("movie_id", "movie__public_id", "movie__title", "theater_id", "show_blocked")
    )
    booked = dict(
        ReservedSeat.objects.filter(schedule__date__range=(start, end), active=True)
        .values("schedule__movie_id")
        .annotate(n=Count("id"))
        .values_list("schedule__movie_id", "n")
    )
    capacities = theater_capacities(theater_ids=(show[3] for show in shows))
    films: dict[int, dict] = {}
    for movie_pk, public_id, title, theater_id, show_blocked in shows:
        film = films.setdefault(movie_pk, {"movie_id": public_id, "title": title, "capacity": 0})
        film["capacity"] += max(0, capacities.get(theater_id, 0) - show_blocked)
    top = max((booked.get(pk, 0) for pk in films), default=0)
    scored = [
        (
            pk,
            film,
            booked.get(pk, 0),
            popularity_score(booked=booked.get(pk, 0), top_booked=top, capacity=film["capacity"]),
        )
        for pk, film in films.items()
    ]
    scored.sort(key=lambda item: (-item[2], -item[3], item[1]["movie_id"]))
    rows: list[PopularityRow] = []
    for position, (pk, film, count, score) in enumerate(scored, start=1):
        # Competition ranking: films with equal booked seats share a rank ("1224").
        rank = rows[-1].popularity_rank if rows and rows[-1].booked_seats_count == count else position
        rows.append(PopularityRow(pk, film["movie_id"], film["title"], count, film["capacity"], score, rank))
    return rows


# --- films ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MovieRow:
    movie: Movie
    recommended: bool
    match: float


def is_recommended(*, rating: Decimal, popularity: Decimal, genre_sells_best: bool = False) -> bool:
    return rating >= RECOMMEND_RATING or (
        rating >= RECOMMEND_RATING_WITH_POPULARITY and (popularity >= RECOMMEND_POPULARITY or genre_sells_best)
    )


def genres_selling_best(*, end: datetime.date, days: int = GENRE_WEEK_DAYS) -> set[str]:
    """The genre(s) with the most seats booked for the shows of the `days` days ending on `end` (ties all
    count; films without a genre and weeks without bookings give none). One query."""
    sold = (
        ReservedSeat.objects.filter(schedule__date__range=(end - datetime.timedelta(days=days - 1), end), active=True)
        .exclude(schedule__movie__genre="")
        .values("schedule__movie__genre")
        .annotate(n=Count("id"))
        .values_list("schedule__movie__genre", "n")
    )
    totals = dict(sold)
    best = max(totals.values(), default=0)
    return {genre for genre, n in totals.items() if n == best and best > 0}


def movie_list(*, on: datetime.date, query: str | None, limit: int) -> list[MovieRow]:
    """Films with a show on `on`, filtered by a 表記揺れ-tolerant title query (five queries)."""
    movies = Movie.objects.filter(pk__in=Schedule.objects.filter(date=on).values("movie_id"))
    popularity = {row.movie_pk: row.popularity_score for row in movie_popularity(start=on)}
    best_genres = genres_selling_best(end=on)
    query_key = normalize(query) if query else ""
    rows = []
    for movie in movies:
        score = match_score(query_key, movie.title_key)
        if score <= 0:
            continue
        recommended = is_recommended(
            rating=movie.rating,
            popularity=popularity.get(movie.pk, Decimal(0)),
            genre_sells_best=movie.genre in best_genres,
        )
        rows.append(MovieRow(movie, recommended, score))
    rows.sort(key=lambda r: (-r.match, not r.recommended, -r.movie.rating, r.movie.public_id))
    return rows[:limit]


def movie_catalogue() -> list[Movie]:
    """Every film in the catalogue, by title."""
    return list(Movie.objects.order_by("title", "public_id"))


def movie_titles_matching(*, query: str, limit: int) -> list[str]:
    """Titles of the catalogue matching `query` with the tools' 表記揺れ tolerance (search.py), best first."""
    query_key = normalize(query)
    scored = []
    for title, title_key in Movie.objects.values_list("title", "title_key"):
        score = match_score(query_key, title_key)
        if score > 0:
            scored.append((-score, title))
    return [title for _score, title in sorted(scored)[:limit]]


def movie_get(*, public_id: str) -> Movie | None:
    return Movie.objects.filter(public_id=public_id).first()


# --- schedules --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    schedule: Schedule
    available_seats_count: int
    total_seats_count: int


def schedule_list(
    *, movie: Movie, first: datetime.date, last: datetime.date, not_before: datetime.datetime | None = None
) -> list[ScheduleRow]:
    """Shows of `movie` from `first` to `last` with live seat counts (two queries).

    `not_before` leaves out shows that start earlier (they can no longer be booked).
    """
    shows = (
        Schedule.objects.filter(movie=movie, date__gte=first, date__lte=last)
        .select_related("theater")
        .annotate(
            # Reserved seats that are still for sale (a seat blocked after it was sold is not double-counted).
            reserved=Count(
                "reserved_seats",
                filter=Q(reserved_seats__active=True, reserved_seats__seat__blocked=False),
            ),
            show_blocked=show_blocked_expression(),
        )
        .order_by("date", "start_time", "theater__public_id")
    )
    if not_before is not None:
        local = timezone.localtime(not_before)
        shows = shows.filter(Q(date__gt=local.date()) | Q(date=local.date(), start_time__gt=local.time()))
    rows = list(shows)
    capacities = theater_capacities(theater_ids=(s.theater_id for s in rows))
    result = []
    for s in rows:
        # Seats blocked for the show are out of its total, as seats blocked for the theater are.
        total = max(0, capacities.get(s.theater_id, 0) - s.show_blocked)
        result.append(ScheduleRow(s, max(0, total - s.reserved), total))
    return result


def schedules_upcoming(
    *, now: datetime.datetime, limit: int, id_prefix: str = "", title: str | None = None
) -> list[Schedule]:
    """Shows that have not started, soonest first; optionally only ids starting with `id_prefix` and only films
    matching `title` (表記揺れ-tolerant, as get_movie_list)."""
    local = timezone.localtime(now)
    shows = (
        Schedule.objects.filter(Q(date__gt=local.date()) | Q(date=local.date(), start_time__gt=local.time()))
        .filter(public_id__startswith=id_prefix)
        .select_related("movie", "theater")
        .order_by("date", "start_time", "public_id")
    )
    if title:
        query_key = normalize(title)
        films = Movie.objects.values_list("pk", "title_key")
        shows = shows.filter(movie_id__in=[pk for pk, key in films if match_score(query_key, key) > 0])
    return list(shows[:limit])


def schedule_get(*, public_id: str) -> Schedule | None:
    return Schedule.objects.select_related("theater", "movie").filter(public_id=public_id).first()


# --- seats ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatState:
    seat_id: str
    row: str
    column: int
    status: str  # available | reserved | blocked
    reservation_id: int | None = None  # the active reservation holding a reserved seat (the admin links to it)


@dataclass(frozen=True, slots=True)
class SeatMap:
    schedule: Schedule
    seats: list[SeatState]
    available_count: int
    reserved_count: int
    blocked_count: int

    def rows(self) -> list[list[SeatState]]:
        """Seats grouped by row, for the admin's seat map."""
        grouped: dict[str, list[SeatState]] = {}
        for seat in self.seats:
            grouped.setdefault(seat.row, []).append(seat)
        return list(grouped.values())


def seat_map_get(*, schedule: Schedule) -> SeatMap:
    """Every seat of the show's theater with its state (two queries, whatever the size); a seat blocked for the
    show alone is blocked, as one blocked for the theater."""
    reserved = dict(
        ReservedSeat.objects.filter(schedule=schedule, active=True).values_list("seat_id", "reservation_id")
    )
    seats: list[SeatState] = []
    counts = {"available": 0, "reserved": 0, "blocked": 0}
    show_blocked = Exists(ShowSeatBlock.objects.filter(schedule=schedule, seat=OuterRef("pk")))
    for pk, label, row, column, blocked in (
        Seat.objects.filter(theater_id=schedule.theater_id)
        .annotate(not_for_sale=Q(blocked=True) | show_blocked)
        .order_by("row", "column")
        .values_list("id", "label", "row", "column", "not_for_sale")
    ):
        status = "reserved" if pk in reserved else "blocked" if blocked else "available"
        counts[status] += 1
        seats.append(SeatState(label, row, column, status, reserved.get(pk)))
    return SeatMap(schedule, seats, counts["available"], counts["reserved"], counts["blocked"])


@dataclass(frozen=True, slots=True)
class ShowSeatGrid:
    labels: list[str]  # every seat of the show's theater, by row and column
    show_blocked: list[str]  # the seats blocked for this show alone
    states: dict[
        str, str
    ]  # seats not to tick for the show: "reserved" (sold at it), "theater" (blocked for every show)


def show_seat_grid(*, schedule: Schedule) -> ShowSeatGrid:
    """What the admin's grid of a show's seat blocks shows (three queries)."""
    reserved = set(ReservedSeat.objects.filter(schedule=schedule, active=True).values_list("seat_id", flat=True))
    blocked = set(ShowSeatBlock.objects.filter(schedule=schedule).values_list("seat_id", flat=True))
    labels, show_blocked, states = [], [], {}
    for pk, label, theater_blocked in (
        Seat.objects.filter(theater_id=schedule.theater_id)
        .order_by("row", "column")
        .values_list("id", "label", "blocked")
    ):
        labels.append(label)
        if pk in blocked:
            show_blocked.append(label)
        if pk in reserved:
            states[label] = "reserved"
        elif theater_blocked:
            states[label] = "theater"
    return ShowSeatGrid(labels, show_blocked, states)


def seat_suggestions(*, seat_map: SeatMap, theater: Theater, count: int, limit: int = 3) -> list[list[SeatState]]:
    """The best blocks of `count` adjacent available seats in one row, at most one per row.

    Best = the row nearest the middle of the theater, then the block nearest the row's centre
    (docs/apps/cinema.md). Aisles are not modelled, so adjacent columns are adjacent seats.
    """
    centre_row = (theater.rows - 1) / 2
    centre_column = (theater.columns + 1) / 2
    best_per_row: list[tuple[float, float, list[SeatState]]] = []
    for row_index, row in enumerate(seat_map.rows()):
        best: tuple[float, list[SeatState]] | None = None
        run: list[SeatState] = []
        for seat in row:
            if seat.status != "available":
                run = []
                continue
            if run and run[-1].column != seat.column - 1:
                run = []
            run.append(seat)
            if len(run) >= count:
                block = run[-count:]
                middle = (block[0].column + block[-1].column) / 2
                distance = abs(middle - centre_column)
                if best is None or distance < best[0]:
                    best = (distance, block)
        if best is not None:
            row_number = ROW_INDEX.get(row[0].row, row_index)
            best_per_row.append((abs(row_number - centre_row), best[0], best[1]))
    best_per_row.sort(key=lambda item: (item[0], item[1], item[2][0].row))
    return [block for _r, _c, block in best_per_row[:limit]]


ROW_INDEX = {letter: index for index, letter in enumerate(ROW_LETTERS)}


# --- reservations -----------------------------------------------------------------------------


def reservation_get(*, public_id: str) -> Reservation | None:
    return (
        Reservation.objects.select_related("schedule__movie", "schedule__theater").filter(public_id=public_id).first()
    )


def reservation_seat_labels_expression() -> Subquery:
    """A reservation's seat labels, space-separated in no set order (SQLite cannot order an aggregate: see
    `seat_labels_sorted`), as one annotation (a subquery: no join multiplies the rows)."""
    return Subquery(
        ReservedSeat.objects.filter(reservation=OuterRef("pk"))
        .order_by()
        .values("reservation")
        .annotate(labels=StringAgg("seat__label", Value(" ")))
        .values("labels")
    )


def seat_labels_sorted(*, labels: str) -> str:
    """ "C4 C3 A10 A2" -> "A2 A10 C3 C4": by row, then by seat number."""
    return " ".join(sorted(labels.split(), key=seat_order))


def reservation_seat_labels(*, reservation: Reservation) -> list[str]:
    """The reservation's seats in seat-map order (kept after a cancellation, for the record)."""
    return list(reservation.seats.order_by("seat__row", "seat__column").values_list("seat__label", flat=True))


# --- the staff dashboard ----------------------------------------------------------------------

NEARLY_FULL_PERMILLE = 800  # a show 80 % sold or more is "nearly full" on the dashboard


@dataclass(frozen=True, slots=True)
class ShowOccupancy:
    schedule_pk: int
    public_id: str
    start_time: datetime.time
    title: str
    theater: str
    booked: int
    capacity: int

    @property
    def permille(self) -> int:
        return self.booked * 1000 // self.capacity if self.capacity else 0

    @property
    def nearly_full(self) -> bool:
        return self.permille >= NEARLY_FULL_PERMILLE


@dataclass(frozen=True, slots=True)
class DayShows:
    date: datetime.date
    total: int  # every show that day
    ended: int  # shows that day that ended before `after`
    shows: list[ShowOccupancy]  # the first `limit` of the others, in start order


def schedule_sold_expression() -> Coalesce:
    """A show's booked seats (its active reserved seats), as one annotation: a subquery per show listed, on the
    reserved seats' schedule index. (A Count over a join would group the whole query, its row count and date
    bounds included.)"""
    return _count_per_show(ReservedSeat.objects.filter(schedule=OuterRef("pk"), active=True))


def show_occupancy_list(*, date: datetime.date, limit: int, after: datetime.time | None = None) -> DayShows:
    """The day's shows that have not ended by `after` (on now, then next: in start order), the first `limit` of
    them with their occupancy (booked seats over the seats sellable at that show, in SQL), and how many ended;
    two queries whatever the number of shows or bookings. A show ending past midnight (end before start) has not
    ended; one without an end time has once it started."""
    capacity = (
        Seat.objects.filter(theater=OuterRef("theater_id"), blocked=False)
        .order_by()
        .values("theater_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    day = Schedule.objects.filter(date=date)
    not_ended = (
        Q(pk__isnull=False)
        if after is None
        else Q(end_time__gt=after) | Q(end_time__lt=F("start_time")) | Q(end_time__isnull=True, start_time__gte=after)
    )
    counts = day.aggregate(total=Count("pk"), ended=Count("pk", filter=~not_ended))
    shows = (
        day.filter(not_ended)
        .annotate(
            capacity=Coalesce(Subquery(capacity), 0) - show_blocked_expression(), booked=schedule_sold_expression()
        )
        .order_by("start_time", "theater__name")
        .values_list("pk", "public_id", "start_time", "movie__title", "theater__name", "booked", "capacity")
    )
    return DayShows(
        date=date, total=counts["total"], ended=counts["ended"], shows=[ShowOccupancy(*row) for row in shows[:limit]]
    )


def reservation_counts_by_day(*, since: datetime.datetime, until: datetime.datetime) -> dict[datetime.date, int]:
    """Reservations made in [since, until) per local day (cancelled ones too: they were bookings that day); one
    query, days without bookings absent. Each day is a count of its own range of `reserved_at`, read from that
    column's index (one UNION ALL arm a day): not the local date of every row (a Python function per row on
    SQLite), nor a condition per day tested on every row of the whole period."""
    zone = timezone.get_current_timezone()
    day, last = timezone.localtime(since, zone).date(), timezone.localtime(until, zone).date()
    days: list[datetime.date] = []
    arms: list[QuerySet[Reservation, tuple[int, int]]] = []
    while day <= last:
        start = max(since, datetime.datetime.combine(day, datetime.time(), zone))
        end = min(until, datetime.datetime.combine(day + datetime.timedelta(days=1), datetime.time(), zone))
        if start < end:
            arm = Reservation.objects.filter(reserved_at__gte=start, reserved_at__lt=end).order_by()
            counted = arm.values(n=Value(len(days), output_field=IntegerField())).annotate(count=Count("*"))
            arms.append(counted.values_list("n", "count"))
            days.append(day)
        day += datetime.timedelta(days=1)
    if not arms:
        return {}
    counts = arms[0].union(*arms[1:], all=True).order_by()
    return {days[n]: count for n, count in counts if count}


# --- printed sheets (the admin's seat map and day sheet) -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatBooking:
    seat_id: str
    reservation_id: int
    public_id: str
    customer_name: str


@dataclass(frozen=True, slots=True)
class ShowSheet:
    seat_map: SeatMap
    bookings: list[SeatBooking]  # reserved seats by row and column

    @property
    def sellable(self) -> int:
        return self.seat_map.available_count + self.seat_map.reserved_count


def show_sheet(*, schedule: Schedule) -> ShowSheet:
    """A show's seat map and who holds each reserved seat (three queries)."""
    bookings = [
        SeatBooking(*row)
        for row in ReservedSeat.objects.filter(schedule=schedule, active=True)
        .order_by("seat__row", "seat__column")
        .values_list("seat__label", "reservation_id", "reservation__public_id", "reservation__customer_name")
    ]
    return ShowSheet(seat_map_get(schedule=schedule), bookings)


@dataclass(frozen=True, slots=True)
class SeatHolder:
    seat_id: str
    reservation_pk: int
    reservation_id: str
    customer_name: str
    status: str  # the reservation's: confirmed (it holds the seat) or cancelled (it did)


def show_seat_holders(*, schedule: Schedule, query: str = "") -> list[SeatHolder]:
    """Every seat a reservation of the show holds or held, by seat and then the live one first (one query); with
    `query`, those whose seat, reservation id or customer name hold each of its words, folded as product search
    folds (`search_key`: width, case, hiragana and katakana, long vowel marks: ﾃﾞﾓ and でも find デモ顧客)."""
    rows = (
        ReservedSeat.objects.filter(schedule=schedule)
        .order_by("seat__row", "seat__column", "-active", "-reservation__reserved_at")
        .values_list(
            "seat__label", "reservation_id", "reservation__public_id", "reservation__customer_name",
            "reservation__status",
        )
    )  # fmt: skip
    holders = [SeatHolder(*row) for row in rows]
    terms = search_key(query).split()
    if not terms:
        return holders
    return [
        holder
        for holder in holders
        if all(term in search_key(f"{holder.seat_id} {holder.reservation_id} {holder.customer_name}") for term in terms)
    ]


def day_sheets(*, theater: Theater, date: datetime.date) -> list[ShowSheet]:
    """Every show of `theater` on `date` in start order, each with its seat map and bookings."""
    shows = (
        Schedule.objects.filter(theater=theater, date=date).select_related("movie", "theater").order_by("start_time")
    )
    return [show_sheet(schedule=show) for show in shows]


# --- the staff's search (mcpsite/staff_search.py) ----------------------------------------------------------------

RESERVATION_NUMBER = re.compile(r"r\d{1,11}")  # a number or its start: r20261128 finds that day's bookings


def reservation_staff_search(*, query: SearchQuery, limit: int) -> list[SearchHit]:
    """Reservations whose number starts with the query, or whose customer's name holds every folded term; newest
    first. Never by the password (its hash is a secret field)."""
    number = query.text.lower()
    if RESERVATION_NUMBER.fullmatch(number):
        # A range on the unique index (LIKE 'r…%' is case-insensitive on SQLite and cannot use it).
        match = Q(public_id__gte=number, public_id__lt=number + "\uffff")
    else:
        match = query.key_holds("customer_key")
    rows = Reservation.objects.filter(match).select_related("schedule__movie").order_by("-reserved_at", "-id")
    return [
        SearchHit(
            r.pk,
            f"{r.public_id} {r.customer_name}".strip(),
            " ".join(
                [
                    day(r.schedule.date),
                    time_of_day(r.schedule.start_time),
                    r.schedule.movie.title,
                    str(r.get_status_display()),
                ]
            ),
        )
        for r in rows[:limit]
    ]
