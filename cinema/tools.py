"""MCP tools of the cinema group (seed: ../shared/seeds/cinema-mcp-tools.md).

Names, arguments and result fields are the seed's. Beyond the seed: `cancel_reservation` (the
seed's overview names cancellation) and `suggest_seats`. `reserve_seats` does not return the
password hash the seed marks optional (docs/apps/cinema.md: a hash in an agent transcript invites offline cracking).
"""

from __future__ import annotations

import datetime

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from mcpsite.core.errors import InvalidParams, InvalidRequest, NotFound
from mcpsite.core.jsonutil import number
from mcpsite.mcp.params import DateError, iso_date
from mcpsite.mcp.registry import READ_ONLY, tool

from . import selectors, services
from .models import Reservation

GROUP = "cinema"
MOVIE_LIST_DEFAULT_LIMIT = 20
MOVIE_LIST_MAX_LIMIT = 100
SCHEDULE_DAYS = 7


def parse_date(value: str | None) -> datetime.date:
    """YYYY-MM-DD (today in Asia/Tokyo when omitted); the seed's -32600 "Invalid date format" otherwise."""
    if value is None:
        return timezone.localdate()
    try:
        return iso_date(value)
    except DateError:
        raise InvalidRequest(data="Invalid date format") from None


def _positive(name: str, value: int | None, default: int | None, cap: int | None = None) -> int | None:
    if value is None:
        return default
    if value < 1:
        raise InvalidParams(data=f"{name} must be 1 or more")
    return min(value, cap) if cap else value


def _time(value: datetime.time) -> str:
    return value.strftime("%H:%M")


def _instant(value: datetime.datetime) -> str:
    """ISO 8601 in UTC with a Z, to the second, as the seed shows (2026-02-20T12:34:56Z)."""
    return value.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def movie_entry(movie) -> dict:
    """A film as get_movie_list shows it (without the day's `recommended`); also the catalogue resource's."""
    entry = {
        "movie_id": movie.public_id,
        "title": movie.title,
        "genre": movie.genre,
        "duration": movie.duration,
        "rating": float(movie.rating),
        "description": movie.description,
    }
    if movie.release_date:
        entry["release_date"] = movie.release_date.isoformat()
    return entry


def seat_map_entry(seat_map: selectors.SeatMap) -> dict:
    """A show's seats as get_seat_availability returns them; also the seat map resource's content."""
    return {
        "schedule_id": seat_map.schedule.public_id,
        "seats": [{"seat_id": s.seat_id, "row": s.row, "column": s.column, "status": s.status} for s in seat_map.seats],
        "available_count": seat_map.available_count,
        "reserved_count": seat_map.reserved_count,
    }


# The MCP Apps view of a show's seats (docs/mcp-apps.md), registered in resources.py.
SEAT_PICKER = "ui://cinema/seat-picker"


def show_meta(args: dict, data: dict) -> dict:
    """For the seat picker: which show the seats are of (film, theater, date, time), beside the seed's result."""
    schedule = _schedule_or_404(data["schedule_id"])
    show = {
        "schedule_id": schedule.public_id,
        "title": schedule.movie.title,
        "theater": schedule.theater.name,
        "date": schedule.date.isoformat(),
        "start_time": _time(schedule.start_time),
    }
    return {"mcpsite/show": show}


def _schedule_or_404(schedule_id: str):
    schedule = selectors.schedule_get(public_id=schedule_id)
    if schedule is None:
        raise NotFound(data=f"Schedule {schedule_id} not found")
    return schedule


# --- 1. get_movie_list ------------------------------------------------------------------------


@tool(
    name="get_movie_list",
    title=_("Movies showing"),
    icon="🎬",
    description="現在上映中または指定日の映画一覧を取得します。推薦ロジック（評価・ジャンル・人気度）に対応。",
    input_schema={
        "type": "object",
        "properties": {
            "date": {
                "type": "string",
                "format": "date",
                "description": "検索対象の日付（YYYY-MM-DD形式。省略時は本日を基準）",
            },
            "query": {
                "type": "string",
                "description": "映画名による検索テキスト（部分一致対応。映画名の揺れを許容）",
            },
            "limit": {"type": "integer", "description": "返却する最大件数（デフォルト: 20）"},
        },
        "required": [],
    },
    output_schema={
        "type": "object",
        "properties": {
            "movies": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "movie_id": {"type": "string", "description": "映画ID"},
                        "title": {"type": "string", "description": "映画タイトル"},
                        "genre": {"type": "string", "description": "ジャンル（例: SF, 恋愛, 冒険）"},
                        "duration": {"type": "integer", "description": "上映時間（分）"},
                        "rating": {"type": "number", "description": "評価スコア（1.0-5.0）"},
                        "description": {"type": "string", "description": "映画の概要"},
                        "release_date": {
                            "type": "string",
                            "format": "date",
                            "description": "公開日（YYYY-MM-DD形式）",
                        },
                        "recommended": {
                            "type": "boolean",
                            "description": "推薦フラグ（評価・人気度が高い場合など）",
                        },
                    },
                    "required": ["movie_id", "title", "rating"],
                },
            }
        },
        "required": ["movies"],
    },
    annotations=READ_ONLY,
)
def get_movie_list(args: dict, ctx) -> dict:
    """Films showing on the date, 表記揺れ-tolerant title search, recommendation flag."""
    on = parse_date(args.get("date"))
    limit = _positive("limit", args.get("limit"), MOVIE_LIST_DEFAULT_LIMIT, MOVIE_LIST_MAX_LIMIT)
    assert limit is not None  # a default is given
    rows = selectors.movie_list(on=on, query=args.get("query"), limit=limit)
    return {"movies": [{**movie_entry(row.movie), "recommended": row.recommended} for row in rows]}


# --- 2. get_show_schedule ---------------------------------------------------------------------


@tool(
    name="get_show_schedule",
    title=_("Show schedule"),
    icon="🗓️",
    description="指定した映画の上映スケジュール一覧を取得します。",
    input_schema={
        "type": "object",
        "properties": {
            "movie_id": {"type": "string", "description": "対象の映画ID"},
            "date": {
                "type": "string",
                "format": "date",
                "description": "検索対象の日付（YYYY-MM-DD形式。省略時は本日以降7日間）",
            },
        },
        "required": ["movie_id"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "schedules": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "schedule_id": {"type": "string", "description": "上映スケジュールID"},
                        "date": {"type": "string", "format": "date", "description": "上映日（YYYY-MM-DD形式）"},
                        "start_time": {"type": "string", "description": "開始時刻（HH:MM形式）"},
                        "end_time": {"type": "string", "description": "終了時刻（HH:MM形式）"},
                        "theater_id": {"type": "string", "description": "上映館ID"},
                        "theater_name": {"type": "string", "description": "上映館名"},
                        "available_seats_count": {"type": "integer", "description": "空き座席数"},
                        "total_seats_count": {"type": "integer", "description": "全座席数"},
                    },
                    "required": ["schedule_id", "date", "start_time", "theater_id", "available_seats_count"],
                },
            }
        },
        "required": ["schedules"],
    },
    annotations=READ_ONLY,
)
def get_show_schedule(args: dict, ctx) -> dict:
    """One day's shows of a film, or today's remaining shows and the next six days'."""
    movie = selectors.movie_get(public_id=args["movie_id"])
    if args.get("date") is not None:
        first = last = parse_date(args["date"])
        not_before = None
    else:
        first = timezone.localdate()
        last = first + datetime.timedelta(days=SCHEDULE_DAYS - 1)
        not_before = timezone.now()
    if movie is None:
        raise NotFound(data=f"Movie {args['movie_id']} not found")
    rows = selectors.schedule_list(movie=movie, first=first, last=last, not_before=not_before)
    return {
        "schedules": [
            {
                "schedule_id": row.schedule.public_id,
                "date": row.schedule.date.isoformat(),
                "start_time": _time(row.schedule.start_time),
                "end_time": _time(row.schedule.end_time),
                "theater_id": row.schedule.theater.public_id,
                "theater_name": row.schedule.theater.name,
                "available_seats_count": row.available_seats_count,
                "total_seats_count": row.total_seats_count,
            }
            for row in rows
        ]
    }


# --- 3. get_movie_popularity ------------------------------------------------------------------

POPULARITY_MAX_DAYS = 366


def _popularity_period(args: dict) -> tuple[datetime.date, datetime.date]:
    """`date` (default today), or `start_date`..`end_date` inclusive: the seed's 指定日付または期間."""
    if "start_date" not in args and "end_date" not in args:
        on = parse_date(args.get("date"))
        return on, on
    if "date" in args:
        raise InvalidParams(data="date cannot be combined with start_date/end_date: give a day or a period")
    if "start_date" not in args or "end_date" not in args:
        raise InvalidParams(data="start_date and end_date go together: give both (or date for one day)")
    start, end = parse_date(args["start_date"]), parse_date(args["end_date"])
    if start > end:
        raise InvalidParams(data="start_date must be on or before end_date")
    if (end - start).days + 1 > POPULARITY_MAX_DAYS:
        raise InvalidParams(data=f"start_date..end_date may span at most {POPULARITY_MAX_DAYS} days")
    return start, end


@tool(
    name="get_movie_popularity",
    title=_("Movie popularity"),
    icon="📈",
    description="上映中映画の人気度ランキングを集計・算出して返却します。",
    input_schema={
        "type": "object",
        "properties": {
            "date": {
                "type": "string",
                "format": "date",
                "description": "集計対象日（YYYY-MM-DD形式。省略時は本日）",
            },
            "start_date": {
                "type": "string",
                "format": "date",
                "description": "集計期間の開始日（YYYY-MM-DD形式。end_date と組で指定。date とは併用不可）",
            },
            "end_date": {
                "type": "string",
                "format": "date",
                "description": "集計期間の終了日（YYYY-MM-DD形式、この日を含む。最長 366 日）",
            },
            "top_n": {"type": "integer", "description": "上位 N 件を返却（省略時は全件）"},
        },
        "required": [],
    },
    output_schema={
        "type": "object",
        "properties": {
            "popularity_ranking": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "movie_id": {"type": "string", "description": "映画ID"},
                        "title": {"type": "string", "description": "映画タイトル"},
                        "booked_seats_count": {"type": "integer", "description": "既予約座席数（入場者数推定）"},
                        "popularity_rank": {"type": "integer", "description": "人気度順位"},
                        "popularity_score": {"type": "number", "description": "人気度スコア（0-100）"},
                    },
                    "required": ["movie_id", "title", "booked_seats_count", "popularity_rank"],
                },
            }
        },
        "required": ["popularity_ranking"],
    },
    annotations=READ_ONLY,
)
def get_movie_popularity(args: dict, ctx) -> dict:
    """Films showing on the date, or over a period, ranked by booked seats, with a 0–100 score (docs/apps/cinema.md)."""
    start, end = _popularity_period(args)
    top_n = _positive("top_n", args.get("top_n"), None)
    rows = selectors.movie_popularity(start=start, end=end)
    if top_n is not None:
        rows = rows[:top_n]
    return {
        "popularity_ranking": [
            {
                "movie_id": row.movie_id,
                "title": row.title,
                "booked_seats_count": row.booked_seats_count,
                "popularity_rank": row.popularity_rank,
                "popularity_score": number(row.popularity_score),
            }
            for row in rows
        ]
    }


# --- 4. get_seat_availability -----------------------------------------------------------------


@tool(
    name="get_seat_availability",
    title=_("Seat availability"),
    icon="💺",
    description="指定上映回の座席一覧と各座席の状態を取得します。",
    input_schema={
        "type": "object",
        "properties": {"schedule_id": {"type": "string", "description": "対象の上映スケジュールID"}},
        "required": ["schedule_id"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "schedule_id": {"type": "string", "description": "上映スケジュールID"},
            "seats": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "seat_id": {"type": "string", "description": "座席ID（例: A1, B5）"},
                        "row": {"type": "string", "description": "行（A, B, C...）"},
                        "column": {"type": "integer", "description": "列（1, 2, 3...）"},
                        "status": {
                            "type": "string",
                            "enum": ["available", "reserved", "blocked"],
                            "description": "座席状態: available=空き, reserved=予約済み, blocked=使用不可",
                        },
                    },
                    "required": ["seat_id", "row", "column", "status"],
                },
            },
            "available_count": {"type": "integer", "description": "空き座席総数"},
            "reserved_count": {"type": "integer", "description": "予約済み座席総数"},
        },
        "required": ["schedule_id", "seats", "available_count"],
    },
    annotations=READ_ONLY,
    ui=SEAT_PICKER,
    ui_meta=show_meta,
)
def get_seat_availability(args: dict, ctx) -> dict:
    """Every seat of the show with available / reserved / blocked, and the counts."""
    return seat_map_entry(selectors.seat_map_get(schedule=_schedule_or_404(args["schedule_id"])))


# --- 5. reserve_seats -------------------------------------------------------------------------


@tool(
    name="reserve_seats",
    title=_("Reserve seats"),
    icon="🎟️",
    writes=True,
    annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
    description="指定した座席の予約を実行します。競合時はエラーを返却。",
    input_schema={
        "type": "object",
        "properties": {
            "schedule_id": {"type": "string", "description": "上映スケジュールID"},
            "seats": {
                "type": "array",
                "items": {"type": "string"},
                "description": '予約座席IDのリスト（例: ["A1", "A2"]）',
            },
            "reservation_password": {
                "type": "string",
                "description": "予約確認用パスワード（プレーンテキスト、保存時にハッシュ化）",
            },
            "customer_name": {"type": "string", "description": "顧客名（オプション）"},
        },
        "required": ["schedule_id", "seats", "reservation_password"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "reservation_id": {"type": "string", "description": "予約ID"},
            "reservation_password_hash": {"type": "string", "description": "パスワードのハッシュ値（検証用）"},
            "reserved_seats": {"type": "array", "items": {"type": "string"}, "description": "確保された座席IDリスト"},
            "reservation_time": {
                "type": "string",
                "format": "date-time",
                "description": "予約完了時刻（ISO 8601形式）",
            },
            "status": {"type": "string", "enum": ["confirmed", "failed"], "description": "予約ステータス"},
        },
        "required": ["reservation_id", "reserved_seats", "reservation_time", "status"],
    },
)
def reserve_seats(args: dict, ctx) -> dict:
    """All of the seats or none; 409 with every conflicted seat. The password is stored as argon2id only."""
    booking = services.reservation_create(
        schedule_id=args["schedule_id"],
        seats=args["seats"],
        password=args["reservation_password"],
        customer_name=args.get("customer_name"),
    )
    return {
        "reservation_id": booking.reservation.public_id,
        "reserved_seats": booking.seat_labels,
        "reservation_time": _instant(booking.reservation.reserved_at),
        "status": "confirmed",
    }


# --- 6. get_reservation_details ---------------------------------------------------------------

_RESERVATION_AUTH_SCHEMA = {
    "type": "object",
    "properties": {
        "reservation_id": {"type": "string", "description": "予約ID"},
        "reservation_password": {"type": "string", "description": "予約確認用パスワード（プレーンテキスト）"},
    },
    "required": ["reservation_id", "reservation_password"],
}


@tool(
    name="get_reservation_details",
    title=_("Reservation details"),
    icon="🧾",
    description="予約 ID とパスワードで予約詳細を取得します。パスワード検証必須。",
    input_schema=_RESERVATION_AUTH_SCHEMA,
    output_schema={
        "type": "object",
        "properties": {
            "reservation_id": {"type": "string", "description": "予約ID"},
            "movie": {
                "type": "object",
                "properties": {
                    "movie_id": {"type": "string", "description": "映画ID"},
                    "title": {"type": "string", "description": "映画タイトル"},
                },
                "required": ["movie_id", "title"],
            },
            "schedule": {
                "type": "object",
                "properties": {
                    "schedule_id": {"type": "string", "description": "上映スケジュールID"},
                    "date": {"type": "string", "format": "date"},
                    "start_time": {"type": "string", "description": "開始時刻（HH:MM形式）"},
                    "theater_id": {"type": "string", "description": "上映館ID"},
                    "theater_name": {"type": "string", "description": "上映館名"},
                },
                "required": ["schedule_id", "date", "start_time", "theater_id"],
            },
            "reserved_seats": {"type": "array", "items": {"type": "string"}, "description": "予約座席IDリスト"},
            "reservation_time": {
                "type": "string",
                "format": "date-time",
                "description": "予約完了時刻（ISO 8601形式）",
            },
            "status": {"type": "string", "description": "予約ステータス（confirmed, cancelled等）"},
        },
        "required": ["reservation_id", "movie", "schedule", "reserved_seats", "reservation_time", "status"],
    },
    annotations=READ_ONLY,
)
def get_reservation_details(args: dict, ctx) -> dict:
    """The reservation when the password matches: 404 unknown id, 403 wrong password, 429 when throttled."""
    reservation = services.reservation_authenticate(
        reservation_id=args["reservation_id"], password=args["reservation_password"], api_key=ctx.api_key
    )
    schedule = reservation.schedule
    return {
        "reservation_id": reservation.public_id,
        "movie": {"movie_id": schedule.movie.public_id, "title": schedule.movie.title},
        "schedule": {
            "schedule_id": schedule.public_id,
            "date": schedule.date.isoformat(),
            "start_time": _time(schedule.start_time),
            "theater_id": schedule.theater.public_id,
            "theater_name": schedule.theater.name,
        },
        "reserved_seats": selectors.reservation_seat_labels(reservation=reservation),
        "reservation_time": _instant(reservation.reserved_at),
        "status": reservation.status,
    }


# --- beyond the seed: cancel_reservation, suggest_seats ---------------------------------------


@tool(
    name="cancel_reservation",
    title=_("Cancel a reservation"),
    icon="❌",
    writes=True,
    description=(
        "予約 ID とパスワードで予約を取り消し、座席を即時に解放します。上映開始後は取り消せません。"
        "取消済みの予約は 409 を返却。"
    ),
    input_schema=_RESERVATION_AUTH_SCHEMA,
    output_schema={
        "type": "object",
        "properties": {
            "reservation_id": {"type": "string", "description": "予約ID"},
            "released_seats": {"type": "array", "items": {"type": "string"}, "description": "解放された座席IDリスト"},
            "cancellation_time": {
                "type": "string",
                "format": "date-time",
                "description": "取消時刻（ISO 8601形式）",
            },
            "status": {"type": "string", "enum": ["cancelled"], "description": "予約ステータス"},
        },
        "required": ["reservation_id", "released_seats", "cancellation_time", "status"],
    },
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
)
def cancel_reservation(args: dict, ctx) -> dict:
    """Cancel with the reservation password; the seats are free for others at once."""
    reservation = services.reservation_authenticate(
        reservation_id=args["reservation_id"], password=args["reservation_password"], api_key=ctx.api_key
    )
    reservation = services.reservation_cancel(reservation=reservation, source=Reservation.Source.CUSTOMER)
    return {
        "reservation_id": reservation.public_id,
        "released_seats": selectors.reservation_seat_labels(reservation=reservation),
        "cancellation_time": _instant(reservation.cancelled_at or timezone.now()),  # set by the cancellation
        "status": reservation.status,
    }


@tool(
    name="suggest_seats",
    title=_("Suggest seats"),
    icon="✨",
    description=(
        "指定上映回で隣り合って空いている座席の組を提案します（中央の列・中央寄りを優先、最大3案）。"
        "「2人並びで」などの希望に一度で答えるためのツールです。予約は行いません。"
    ),
    input_schema={
        "type": "object",
        "properties": {
            "schedule_id": {"type": "string", "description": "上映スケジュールID"},
            "count": {"type": "integer", "description": "並びで必要な座席数（1以上、1予約の上限以下）"},
        },
        "required": ["schedule_id", "count"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "schedule_id": {"type": "string", "description": "上映スケジュールID"},
            "count": {"type": "integer", "description": "要求された座席数"},
            "suggestions": {
                "type": "array",
                "description": "良い順の提案（空なら並びの空席なし）",
                "items": {
                    "type": "object",
                    "properties": {
                        "seats": {"type": "array", "items": {"type": "string"}, "description": "座席IDリスト"},
                        "row": {"type": "string", "description": "行"},
                    },
                    "required": ["seats", "row"],
                },
            },
            "available_count": {"type": "integer", "description": "空き座席総数"},
        },
        "required": ["schedule_id", "count", "suggestions", "available_count"],
    },
    annotations=READ_ONLY,
)
def suggest_seats(args: dict, ctx) -> dict:
    """The best blocks of `count` adjacent free seats, centre rows first (docs/apps/cinema.md)."""
    limit = settings.CINEMA_MAX_SEATS_PER_RESERVATION
    count = args["count"]
    if not 1 <= count <= limit:
        raise InvalidParams(data=f"count must be between 1 and {limit}")
    schedule = _schedule_or_404(args["schedule_id"])
    seat_map = selectors.seat_map_get(schedule=schedule)
    blocks = selectors.seat_suggestions(seat_map=seat_map, theater=schedule.theater, count=count)
    return {
        "schedule_id": schedule.public_id,
        "count": count,
        "suggestions": [{"seats": [s.seat_id for s in block], "row": block[0].row} for block in blocks],
        "available_count": seat_map.available_count,
    }
