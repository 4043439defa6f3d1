"""Demo data for the cinema tools: the seed's own examples, a week of shows from today, some bookings.

Idempotent: running it again adds only what is missing (e.g. the shows of a new day).
`--scale N` adds N×100 films with a show each in 500-seat theaters, for the benchmark.
"""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.contrib.auth.hashers import make_password
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone
from tqdm import tqdm

from cinema import services
from cinema.models import Movie, Reservation, ReservedSeat, Schedule, Seat, Theater

DEMO_PASSWORD = "mypassword123"  # the seed's sample password; documented in docs/apps/cinema.md

MOVIES = [
    ("m001", "スタームービー", "SF", 120, "4.5", "宇宙冒険ストーリー", "2026-02-01"),
    ("m002", "スターダスト", "ファンタジー", 135, "4.2", "星降る夜の恋物語", "2026-01-15"),
    ("m003", "ヒット作", "アクション", 110, "4.0", "街を駆け抜ける痛快アクション", "2026-03-01"),
    ("m004", "となりの猫ちゃん", "アニメ", 95, "3.8", "小さな町の猫と少女の夏休み", "2026-04-10"),
    ("m005", "ミッドナイト・ラン", "サスペンス", 125, "3.5", "終電後の東京を舞台にした追跡劇", "2026-05-20"),
]
THEATERS = [
    ("t01", "シアター1", 10, 10, set()),
    ("t02", "シアター2", 10, 10, set()),
    ("t03", "シアター3", 8, 12, {"A1", "A12"}),
]
# (theater, start, movie) for every day of the demo week.
DAILY_SHOWS = [
    ("t01", "10:00", "m001"),
    ("t01", "13:00", "m002"),
    ("t01", "16:00", "m003"),
    ("t01", "19:00", "m001"),
    ("t02", "11:00", "m002"),
    ("t02", "14:00", "m001"),
    ("t02", "17:30", "m004"),
    ("t03", "12:00", "m003"),
    ("t03", "15:00", "m005"),
    ("t03", "20:30", "m003"),
]
# The seed's example flow books A1 and A3 of a スタームービー (m001) show; the demo keeps one still to come on the
# day it is seeded, at least this far ahead, at a quarter to the hour (no daily show starts then).
REPLAY_LEAD = datetime.timedelta(minutes=30)
# The seed's fixed example day, kept as past history.
SEED_DAY = datetime.date(2026, 2, 20)
SEED_SHOWS = [("s001", "t01", "10:00", "12:00", "m001"), ("s002", "t02", "14:00", "16:00", "m001")]
SEED_BOOKED = {"s001": ["A2", "C4", "C5", "D5", "D6", "E5", "E6", "F1"], "s002": ["E5", "E6"]}


class Command(BaseCommand):
    help = "Seed demo cinema data (idempotent); --scale N adds N×100 films for benchmarks."

    def add_arguments(self, parser):
        parser.add_argument("--scale", type=int, default=0, help="add N×100 benchmark films with 500-seat shows")
        parser.add_argument("--days", type=int, default=7, help="days of demo shows from today (default 7)")

    def handle(self, *args, scale: int, days: int, **options):
        movies = {m.public_id: m for m in self._movies()}
        theaters = {t.public_id: t for t in self._theaters()}
        self._seed_day_history(movies, theaters)
        created = self._week(movies, theaters, days) + self._replay_show(movies, theaters)
        booked = self._demo_bookings(days)
        self.stdout.write(
            f"cinema: {len(movies)} films, {len(theaters)} theaters, {created} new shows, {booked} new bookings"
        )
        if scale > 0:
            self._scale(scale)

    def _movies(self):
        for public_id, title, genre, duration, rating, description, release in MOVIES:
            movie, _ = Movie.objects.get_or_create(
                public_id=public_id,
                defaults={
                    "title": title,
                    "genre": genre,
                    "duration": duration,
                    "rating": Decimal(rating),
                    "description": description,
                    "release_date": datetime.date.fromisoformat(release),
                },
            )
            yield movie

    def _theaters(self):
        for public_id, name, rows, columns, blocked in THEATERS:
            theater, created = Theater.objects.get_or_create(
                public_id=public_id, defaults={"name": name, "rows": rows, "columns": columns}
            )
            if created:
                services.theater_set_layout(theater=theater, rows=rows, columns=columns, blocked=blocked)
            yield theater

    def _seed_day_history(self, movies, theaters):
        password_hash = None
        for public_id, theater_id, start, end, movie_id in SEED_SHOWS:
            schedule, created = Schedule.objects.get_or_create(
                public_id=public_id,
                defaults={
                    "movie": movies[movie_id],
                    "theater": theaters[theater_id],
                    "date": SEED_DAY,
                    "start_time": datetime.time.fromisoformat(start),
                    "end_time": datetime.time.fromisoformat(end),
                },
            )
            if not created or schedule.reservations.exists():
                continue
            # Past shows cannot be booked through the service (by design); history is written directly.
            password_hash = password_hash or make_password(DEMO_PASSWORD)
            seats = list(Seat.objects.filter(theater=schedule.theater, label__in=SEED_BOOKED[public_id]))
            with transaction.atomic():
                reservation = Reservation.objects.create(
                    public_id=services.reservation_id_next(day=SEED_DAY),
                    schedule=schedule,
                    customer_name="田中太郎",
                    password_hash=password_hash,
                    reserved_at=timezone.make_aware(datetime.datetime(2026, 2, 19, 21, 34, 56)),
                )
                ReservedSeat.objects.bulk_create(
                    [ReservedSeat(reservation=reservation, schedule=schedule, seat=s) for s in seats]
                )

    def _week(self, movies, theaters, days) -> int:
        today = timezone.localdate()
        created = 0
        for offset in range(days):
            day = today + datetime.timedelta(days=offset)
            for theater_id, start, movie_id in DAILY_SHOWS:
                _, new = Schedule.objects.get_or_create(
                    theater=theaters[theater_id],
                    date=day,
                    start_time=datetime.time.fromisoformat(start),
                    defaults={"movie": movies[movie_id]},
                )
                created += new
        return created

    def _replay_show(self, movies, theaters) -> int:
        """A show of m001 later today, in a theater free then, when its daily shows are over or about to start, so
        the seed's example flow (get_movie_list → get_show_schedule → get_seat_availability → reserve_seats A1, A3 →
        get_reservation_details) can be replayed with today's date whenever the demo is seeded (not when the show
        would start after midnight)."""
        soon = timezone.localtime() + REPLAY_LEAD
        today = timezone.localdate()
        later = Schedule.objects.filter(movie=movies["m001"], date=today, start_time__gte=soon.time())
        if soon.date() != today or later.exists():
            return 0
        start = soon.replace(minute=45, second=0, microsecond=0)
        if start < soon:
            start += datetime.timedelta(hours=1)
        if start.date() != today:
            return 0
        end = start + datetime.timedelta(minutes=movies["m001"].duration)
        for theater in theaters.values():
            if not any(self._overlaps(show, start, end) for show in theater.schedules.filter(date=today)):
                Schedule.objects.create(theater=theater, date=today, start_time=start.time(), movie=movies["m001"])
                return 1
        return 0

    @staticmethod
    def _overlaps(show: Schedule, start: datetime.datetime, end: datetime.datetime) -> bool:
        begins = timezone.make_aware(datetime.datetime.combine(show.date, show.start_time))
        ends = timezone.make_aware(datetime.datetime.combine(show.date, show.end_time))
        if ends <= begins:  # runs past midnight
            ends += datetime.timedelta(days=1)
        return begins < end and start < ends

    def _demo_bookings(self, days) -> int:
        """A few bookings through the real service on upcoming shows that have none yet."""
        now = timezone.now()
        today = timezone.localdate()
        shows = [
            s
            for s in Schedule.objects.filter(date__gte=today, date__lt=today + datetime.timedelta(days=min(days, 3)))
            .select_related("theater")
            .order_by("date", "start_time")
            if s.starts_at > now and not s.reservations.exists()
        ]
        patterns = [["E5", "E6"], ["D4", "D5", "D6"], ["F5"], ["C3", "C4"], ["G7", "G8", "G9", "G10"]]
        booked = 0
        for index, show in enumerate(shows):
            for seats in patterns[: 1 + index % len(patterns)]:
                services.reservation_create(
                    schedule_id=show.public_id, seats=seats, password=DEMO_PASSWORD, customer_name="デモ顧客"
                )
                booked += 1
        return booked

    def _scale(self, scale: int) -> None:
        """N×100 films, each with one show tomorrow in a 20×25 (500-seat) theater, about 10% sold."""
        total = scale * 100
        day = timezone.localdate() + datetime.timedelta(days=1)
        existing = Movie.objects.filter(title__startswith="ベンチ映画").count()
        if existing >= total:
            self.stdout.write(f"cinema: {existing} benchmark films already present")
            return
        password_hash = make_password(DEMO_PASSWORD)
        slots_per_theater = 24 * 6  # one show every 10 minutes
        genres = ["SF", "ドラマ", "アクション", "アニメ", "恋愛", "ホラー"]
        theaters: dict[int, tuple[Theater, list[Seat]]] = {}  # each theater and its seats, read once
        for n in tqdm(range(existing, total), desc="cinema benchmark films", unit="film"):
            theater_index, slot = divmod(n, slots_per_theater)
            if theater_index not in theaters:
                theater = self._bench_theater(theater_index)
                theaters[theater_index] = (theater, list(theater.seats.order_by("row", "column")))
            theater, theater_seats = theaters[theater_index]
            with transaction.atomic():
                movie = Movie.objects.create(
                    title=f"ベンチ映画{n + 1:04d}",
                    genre=genres[n % len(genres)],
                    duration=90 + n % 60,
                    rating=Decimal(10 + n % 41) / 10,
                    description="ベンチマーク用の作品",
                )
                schedule = Schedule.objects.create(
                    movie=movie,
                    theater=theater,
                    date=day,
                    start_time=datetime.time(slot // 6, slot % 6 * 10),
                    end_time=datetime.time((slot + 1) // 6 % 24, (slot + 1) % 6 * 10),  # ten minutes: no overlap
                )
                seats = theater_seats[n % 7 :: 10][: 5 + n % 50]
                reservation = Reservation.objects.create(
                    public_id=services.reservation_id_next(day=timezone.localdate()),
                    schedule=schedule,
                    password_hash=password_hash,
                    reserved_at=timezone.now(),
                )
                ReservedSeat.objects.bulk_create(
                    [ReservedSeat(reservation=reservation, schedule=schedule, seat=s) for s in seats]
                )

    def _bench_theater(self, index: int) -> Theater:
        name = f"ベンチシアター{index + 1}"
        theater, created = Theater.objects.get_or_create(name=name, defaults={"rows": 20, "columns": 25})
        if created:
            services.theater_set_layout(theater=theater, rows=20, columns=25)
        return theater
