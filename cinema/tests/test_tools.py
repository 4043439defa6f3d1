"""The seed's samples through the real `/rpc` endpoint, and every tool's bad inputs in the seed's error shape."""

from __future__ import annotations

import datetime
import json

import pytest

from cinema.tests.conftest import SEED_MORNING
from mcpsite.core.errors import InvalidParams

pytestmark = pytest.mark.django_db


def _reserve(call_tool, schedule_id="s001", seats=("A1", "A3"), password="mypassword123", **extra):
    args = {"schedule_id": schedule_id, "seats": list(seats), "reservation_password": password, **extra}
    return call_tool("reserve_seats", args)


# --- the seed's samples ---------------------------------------------------------------------------


def test_seed_sample_get_movie_list(rpc, seed_world):
    answer = rpc("get_movie_list", {"date": "2026-02-20", "query": "スター", "limit": 10})
    assert answer["result"] == {
        "movies": [
            {
                "movie_id": "m001",
                "title": "スタームービー",
                "genre": "SF",
                "duration": 120,
                "rating": 4.5,
                "description": "宇宙冒険ストーリー",
                "release_date": "2026-02-01",
                "recommended": True,
            },
            {
                "movie_id": "m002",
                "title": "スターダスト",
                "genre": "ファンタジー",
                "duration": 135,
                "rating": 4.2,
                "description": "星降る夜の恋物語",
                "release_date": "2026-01-15",
                "recommended": False,
            },
        ]
    }


def test_seed_sample_invalid_date(rpc, seed_world):
    for bad in ("2026/02/20", "20260220", "2026-02-30", "tomorrow", ""):
        answer = rpc("get_movie_list", {"date": bad})
        assert answer["error"] == {"code": -32600, "message": "Invalid Request", "data": "Invalid date format"}


def test_seed_sample_get_show_schedule(rpc, seed_world, call_tool):
    _reserve(call_tool, seats=["A1", "A2", "A3"])
    answer = rpc("get_show_schedule", {"movie_id": "m001", "date": "2026-02-20"}, id_=2)
    assert answer == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {
            "schedules": [
                {
                    "schedule_id": "s001",
                    "date": "2026-02-20",
                    "start_time": "10:00",
                    "end_time": "12:00",
                    "theater_id": "t01",
                    "theater_name": "シアター1",
                    "available_seats_count": 97,
                    "total_seats_count": 100,
                },
                {
                    "schedule_id": "s002",
                    "date": "2026-02-20",
                    "start_time": "14:00",
                    "end_time": "16:00",
                    "theater_id": "t02",
                    "theater_name": "シアター2",
                    "available_seats_count": 100,
                    "total_seats_count": 100,
                },
            ]
        },
    }


def test_seed_sample_get_movie_popularity(rpc, seed_world, call_tool):
    _reserve(call_tool, seats=["A1", "A2", "A3", "A4"])
    _reserve(call_tool, schedule_id="s003", seats=["B1"])
    answer = rpc("get_movie_popularity", {"date": "2026-02-20", "top_n": 5}, id_=3)
    ranking = answer["result"]["popularity_ranking"]
    assert [(r["movie_id"], r["title"], r["booked_seats_count"], r["popularity_rank"]) for r in ranking] == [
        ("m001", "スタームービー", 4, 1),
        ("m002", "スターダスト", 1, 2),
    ]
    # m001: 0.5 × 4/4 + 0.5 × 4/200 → 51.0; m002: 0.5 × 1/4 + 0.5 × 1/100 → 13.0
    assert [r["popularity_score"] for r in ranking] == [51, 13]


def test_seed_sample_get_seat_availability(rpc, seed_world, call_tool):
    _reserve(call_tool, seats=["A2"])
    answer = rpc("get_seat_availability", {"schedule_id": "s001"}, id_=4)["result"]
    assert answer["schedule_id"] == "s001"
    assert answer["seats"][:3] == [
        {"seat_id": "A1", "row": "A", "column": 1, "status": "available"},
        {"seat_id": "A2", "row": "A", "column": 2, "status": "reserved"},
        {"seat_id": "A3", "row": "A", "column": 3, "status": "available"},
    ]
    assert len(answer["seats"]) == 100
    assert (answer["available_count"], answer["reserved_count"]) == (99, 1)


def test_seed_sample_reserve_seats_and_conflict(rpc, seed_world):
    params = {
        "schedule_id": "s001",
        "seats": ["A1", "A3"],
        "reservation_password": "mypassword123",
        "customer_name": "田中太郎",
    }
    answer = rpc("reserve_seats", params, id_=5)
    assert answer["result"] == {
        "reservation_id": "r20260220001",
        "reserved_seats": ["A1", "A3"],
        "reservation_time": "2026-02-19T23:00:00Z",  # 08:00 in Tokyo
        "status": "confirmed",
    }
    assert "reservation_password_hash" not in answer["result"]  # deliberate (docs/apps/cinema.md)

    again = rpc("reserve_seats", {**params, "seats": ["A3", "A4"]}, id_=5)
    assert again["error"] == {
        "code": 409,
        "message": "Seat conflict",
        "data": {"conflicted_seats": ["A3"], "message": "Seat A3 is already reserved"},
    }


def test_seed_sample_get_reservation_details(rpc, seed_world):
    rpc("reserve_seats", {"schedule_id": "s001", "seats": ["A1", "A3"], "reservation_password": "mypassword123"})
    answer = rpc("get_reservation_details", {"reservation_id": "r20260220001", "reservation_password": "mypassword123"})
    assert answer["result"] == {
        "reservation_id": "r20260220001",
        "movie": {"movie_id": "m001", "title": "スタームービー"},
        "schedule": {
            "schedule_id": "s001",
            "date": "2026-02-20",
            "start_time": "10:00",
            "theater_id": "t01",
            "theater_name": "シアター1",
        },
        "reserved_seats": ["A1", "A3"],
        "reservation_time": "2026-02-19T23:00:00Z",
        "status": "confirmed",
    }
    wrong = rpc("get_reservation_details", {"reservation_id": "r20260220001", "reservation_password": "nope-nope"})
    assert wrong["error"] == {"code": 403, "message": "Forbidden", "data": "Invalid reservation password"}
    unknown = rpc("get_reservation_details", {"reservation_id": "r20990101001", "reservation_password": "whatever"})
    assert unknown["error"]["code"] == 404


# --- get_movie_list -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query", ["すたーむーびー", "ｽﾀｰﾑｰﾋﾞｰ", "スタームビー", "スタームーピー", "ｽﾀｰ･ﾑｰﾋﾞｰ", "スター・ムービー"]
)
def test_movie_query_tolerates_spelling_variations(call_tool, seed_world, query):
    movies = call_tool("get_movie_list", {"date": "2026-02-20", "query": query})["movies"]
    assert [m["movie_id"] for m in movies] == ["m001"]


def test_movie_list_defaults_to_today_and_only_lists_films_showing(call_tool, seed_world):
    assert [m["movie_id"] for m in call_tool("get_movie_list")["movies"]] == ["m001", "m002"]
    assert call_tool("get_movie_list", {"date": "2026-02-21"})["movies"] == []
    assert call_tool("get_movie_list", {"query": "ゴジラ"})["movies"] == []


def test_movie_list_limit(call_tool, seed_world):
    assert len(call_tool("get_movie_list", {"limit": 1})["movies"]) == 1
    assert len(call_tool("get_movie_list", {"limit": 10_000})["movies"]) == 2  # capped, not refused
    with pytest.raises(InvalidParams) as refused:
        call_tool("get_movie_list", {"limit": 0})
    assert refused.value.detail == "limit must be 1 or more"


@pytest.mark.parametrize(
    "args",
    [{"limit": "10"}, {"query": 5}, {"date": 20260220}, {"limit": 1.5}],
)
def test_movie_list_wrong_types_are_invalid_params(rpc, seed_world, args):
    assert rpc("get_movie_list", args)["error"]["code"] == -32602


# --- get_show_schedule ----------------------------------------------------------------------------


def test_show_schedule_without_date_covers_the_next_seven_days_from_now(call_tool, seed_world, freeze_now):
    from cinema.tests.conftest import make_schedule

    m1, t1 = seed_world["m001"], seed_world["t01"]
    for offset in (1, 6, 7):
        make_schedule(m1, t1, seed_world["day"] + datetime.timedelta(days=offset), "09:00")
    freeze_now(SEED_MORNING.replace(hour=11))  # s001 (10:00) has started, s002 (14:00) has not
    schedules = call_tool("get_show_schedule", {"movie_id": "m001"})["schedules"]
    assert [(s["date"], s["start_time"]) for s in schedules] == [
        ("2026-02-20", "14:00"),
        ("2026-02-21", "09:00"),
        ("2026-02-26", "09:00"),
    ]


def test_show_schedule_errors(rpc, seed_world):
    assert rpc("get_show_schedule", {"movie_id": "m999"})["error"] == {
        "code": 404,
        "message": "Not Found",
        "data": "Movie m999 not found",
    }
    assert rpc("get_show_schedule", {"movie_id": "m001", "date": "02-20-2026"})["error"]["code"] == -32600
    assert rpc("get_show_schedule", {})["error"]["code"] == -32602


# --- get_movie_popularity -------------------------------------------------------------------------


def test_popularity_top_n_and_errors(call_tool, rpc, seed_world):
    assert len(call_tool("get_movie_popularity", {"top_n": 1})["popularity_ranking"]) == 1
    assert len(call_tool("get_movie_popularity")["popularity_ranking"]) == 2
    assert rpc("get_movie_popularity", {"top_n": 0})["error"]["code"] == -32602
    assert rpc("get_movie_popularity", {"date": "2026-13-01"})["error"]["data"] == "Invalid date format"


def test_popularity_for_a_period(call_tool, rpc, seed_world):
    """The seed's 指定日付または期間: start_date..end_date inclusive, with the date's own error rules."""
    from cinema import services

    services.reservation_create(schedule_id="s003", seats=["A1", "A2"], password="pw-123456")
    period = {"start_date": "2026-02-19", "end_date": "2026-02-21"}
    ranking = call_tool("get_movie_popularity", period)["popularity_ranking"]
    assert [(r["movie_id"], r["booked_seats_count"]) for r in ranking][0] == ("m002", 2)
    assert ranking == call_tool("get_movie_popularity", {"date": "2026-02-20"})["popularity_ranking"]
    assert call_tool("get_movie_popularity", {"start_date": "2026-02-21", "end_date": "2026-02-28"}) == {
        "popularity_ranking": []
    }
    assert rpc("get_movie_popularity", {**period, "end_date": "2026-02-30"})["error"]["data"] == "Invalid date format"
    for arguments, words in [
        ({**period, "date": "2026-02-20"}, "date cannot be combined"),
        ({"start_date": "2026-02-19"}, "start_date and end_date go together"),
        ({"end_date": "2026-02-19"}, "start_date and end_date go together"),
        ({"start_date": "2026-02-21", "end_date": "2026-02-19"}, "start_date must be on or before end_date"),
        ({"start_date": "2025-01-01", "end_date": "2026-02-19"}, "at most 366 days"),
    ]:
        error = rpc("get_movie_popularity", arguments)["error"]
        assert (error["code"], error["message"]) == (-32602, "Invalid params") and words in error["data"], arguments


def test_integral_numbers_are_integers_and_huge_ones_are_refused(call_tool, rpc, seed_world):
    """JSON Schema counts 5.0 and 1e308 as integers: they used to pass validation and crash the tools (-32603)."""
    assert len(call_tool("get_movie_list", {"limit": 1.0})["movies"]) == 1
    assert len(call_tool("get_movie_popularity", {"top_n": 1.0})["popularity_ranking"]) == 1
    for name, arguments, field in [
        ("get_movie_popularity", {"top_n": 1e308}, "top_n"),
        ("get_movie_list", {"limit": 1e19}, "limit"),
        ("suggest_seats", {"schedule_id": "s001", "count": 2.0**70}, "count"),
    ]:
        error = rpc(name, arguments)["error"]
        assert error["code"] == -32602 and error["data"].startswith(f"{field}: must be at most"), error


# --- get_seat_availability ------------------------------------------------------------------------


def test_seat_availability_shows_blocked_seats(call_tool, seed_world):
    from cinema import services

    services.theater_set_layout(theater=seed_world["t01"], rows=10, columns=10, blocked={"B2"})
    result = call_tool("get_seat_availability", {"schedule_id": "s001"})
    assert {"seat_id": "B2", "row": "B", "column": 2, "status": "blocked"} in result["seats"]
    assert (result["available_count"], result["reserved_count"]) == (99, 0)


def test_seat_availability_unknown_schedule(rpc, seed_world):
    assert rpc("get_seat_availability", {"schedule_id": "s999"})["error"] == {
        "code": 404,
        "message": "Not Found",
        "data": "Schedule s999 not found",
    }


# --- reserve_seats --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "code", "fragment"),
    [
        ({"seats": []}, -32602, "at least one seat"),
        ({"seats": ["A1", "A1"]}, -32602, "Duplicate seat ids: A1"),
        ({"seats": ["1A"]}, -32602, "Invalid seat id '1A'"),
        ({"seats": ["A0"]}, -32602, "Invalid seat id"),
        ({"seats": ["K1"]}, -32602, "No such seat in シアター1: K1"),
        ({"seats": [f"C{i}" for i in range(1, 12)]}, -32602, "At most 10 seats"),
        ({"seats": [1]}, -32602, "seats[0]"),
        ({"schedule_id": "s999"}, 404, "Schedule s999 not found"),
        ({"reservation_password": "abc"}, -32602, "6 to 128 characters"),
        ({"reservation_password": "x" * 129}, -32602, "6 to 128 characters"),
        ({"customer_name": "名" * 101}, -32602, "customer_name"),
    ],
)
def test_reserve_seats_rejects_bad_input(rpc, seed_world, params, code, fragment):
    base = {"schedule_id": "s001", "seats": ["A1"], "reservation_password": "mypassword123"}
    error = rpc("reserve_seats", {**base, **params})["error"]
    assert error["code"] == code
    assert fragment in json.dumps(error, ensure_ascii=False)
    from cinema.models import Reservation

    assert not Reservation.objects.exists()


def test_reserve_normalises_full_width_and_lower_case_seat_ids(call_tool, seed_world):
    assert _reserve(call_tool, seats=["ａ１", "b2"])["reserved_seats"] == ["A1", "B2"]


def test_reserve_refuses_blocked_seats_and_started_shows(rpc, seed_world, freeze_now):
    from cinema import services

    services.theater_set_layout(theater=seed_world["t01"], rows=10, columns=10, blocked={"B2"})
    base = {"schedule_id": "s001", "reservation_password": "mypassword123"}
    assert "B2 cannot be reserved (blocked)" in rpc("reserve_seats", {**base, "seats": ["B2"]})["error"]["data"]
    freeze_now(SEED_MORNING.replace(hour=10))
    error = rpc("reserve_seats", {**base, "seats": ["A1"]})["error"]
    assert (error["code"], error["message"]) == (-32602, "Invalid params")
    assert "can no longer be booked" in error["data"]


def test_conflict_lists_every_conflicted_seat_and_books_nothing(call_tool, rpc, seed_world):
    _reserve(call_tool, seats=["A1", "A2", "A3"])
    error = rpc(
        "reserve_seats", {"schedule_id": "s001", "seats": ["A4", "A3", "A1"], "reservation_password": "secret-pw"}
    )["error"]
    assert error["data"] == {"conflicted_seats": ["A3", "A1"], "message": "Seats A3, A1 are already reserved"}
    seats = call_tool("get_seat_availability", {"schedule_id": "s001"})["seats"]
    assert next(s for s in seats if s["seat_id"] == "A4")["status"] == "available"


def test_reservation_ids_count_up_per_day(call_tool, seed_world):
    ids = [_reserve(call_tool, seats=[f"D{i}"])["reservation_id"] for i in range(1, 4)]
    assert ids == ["r20260220001", "r20260220002", "r20260220003"]


# --- get_reservation_details / cancel_reservation -------------------------------------------------


def test_wrong_passwords_are_throttled_per_reservation(rpc, seed_world, settings, api_key):
    settings.CINEMA_PASSWORD_RATE = "3/15m"
    rpc("reserve_seats", {"schedule_id": "s001", "seats": ["A1"], "reservation_password": "right-password"})
    codes = [
        rpc("get_reservation_details", {"reservation_id": "r20260220001", "reservation_password": f"guess-{i}"})[
            "error"
        ]["code"]
        for i in range(4)
    ]
    assert codes == [403, 403, 403, 429]
    # Even the right password is refused until the window passes: guessing cannot go on.
    right = rpc("get_reservation_details", {"reservation_id": "r20260220001", "reservation_password": "right-password"})
    assert right["error"]["code"] == 429
    cancel = rpc("cancel_reservation", {"reservation_id": "r20260220001", "reservation_password": "right-password"})
    assert cancel["error"]["code"] == 429


def test_another_keys_guesses_never_lock_the_owner_out(rpc, seed_world, settings, make_api_key):
    """Issue #17: five wrong guesses from any key locked the real owner out of details and cancel."""
    settings.CINEMA_PASSWORD_RATE = "3/15m"
    (_owner, owner_raw), (_attacker, attacker_raw) = make_api_key(name="owner"), make_api_key(name="attacker")

    def as_key(raw, method, password):
        params = {"reservation_id": "r20260220001", "reservation_password": password}
        if method == "reserve_seats":
            params = {"schedule_id": "s001", "seats": ["A1"], "reservation_password": password}
        return rpc(method, params, raw_key=raw)

    as_key(owner_raw, "reserve_seats", "right-password")
    guesses = [as_key(attacker_raw, "get_reservation_details", f"guess-{i}")["error"]["code"] for i in range(6)]
    assert guesses == [403, 403, 403, 429, 429, 429]
    # the owner's key has its own allowance, and the right password never uses it up
    for _ in range(5):
        details = as_key(owner_raw, "get_reservation_details", "right-password")
        assert details["result"]["reservation_id"] == "r20260220001"
    assert as_key(owner_raw, "cancel_reservation", "right-password")["result"]["status"] == "cancelled"


def test_cancel_frees_seats_at_once_and_twice_is_an_error(call_tool, rpc, seed_world):
    _reserve(call_tool, seats=["E5", "E6"])
    auth = {"reservation_id": "r20260220001", "reservation_password": "mypassword123"}
    assert call_tool("cancel_reservation", auth) == {
        "reservation_id": "r20260220001",
        "released_seats": ["E5", "E6"],
        "cancellation_time": "2026-02-19T23:00:00Z",
        "status": "cancelled",
    }
    assert call_tool("get_reservation_details", auth)["status"] == "cancelled"
    assert _reserve(call_tool, seats=["E5", "E6"])["reservation_id"] == "r20260220002"
    assert rpc("cancel_reservation", auth)["error"] == {
        "code": 409,
        "message": "Already cancelled",
        "data": "Reservation r20260220001 is already cancelled",
    }


def test_cancel_after_the_show_started_is_refused(rpc, call_tool, seed_world, freeze_now):
    _reserve(call_tool, seats=["A1"])
    freeze_now(SEED_MORNING.replace(hour=10, minute=1))
    error = rpc("cancel_reservation", {"reservation_id": "r20260220001", "reservation_password": "mypassword123"})[
        "error"
    ]
    assert (error["code"], error["message"]) == (409, "Show already started")


def test_cancel_errors(rpc, seed_world):
    assert rpc("cancel_reservation", {"reservation_id": "r1", "reservation_password": "x" * 8})["error"]["code"] == 404
    assert rpc("cancel_reservation", {"reservation_id": "r1"})["error"]["code"] == -32602


# --- suggest_seats --------------------------------------------------------------------------------


def test_suggest_seats_prefers_centre_rows_and_skips_taken_seats(call_tool, seed_world):
    _reserve(call_tool, seats=["E5", "E6"])
    result = call_tool("suggest_seats", {"schedule_id": "s001", "count": 2})
    # 10 rows: the centre lies between E and F; E's middle is taken, so F comes first.
    assert result["suggestions"][0] == {"seats": ["F5", "F6"], "row": "F"}
    assert result["suggestions"][1]["row"] == "E"
    assert set(result["suggestions"][1]["seats"]).isdisjoint({"E5", "E6"})
    assert result["available_count"] == 98
    assert len(result["suggestions"]) == 3


def test_suggest_seats_errors_and_full_rows(call_tool, rpc, seed_world):
    from cinema import services

    services.theater_set_layout(theater=seed_world["t01"], rows=1, columns=3, blocked={"A2"})
    assert call_tool("suggest_seats", {"schedule_id": "s001", "count": 2})["suggestions"] == []
    assert rpc("suggest_seats", {"schedule_id": "s001", "count": 0})["error"]["code"] == -32602
    assert rpc("suggest_seats", {"schedule_id": "s001", "count": 11})["error"]["code"] == -32602
    assert rpc("suggest_seats", {"schedule_id": "nope", "count": 2})["error"]["code"] == 404


def test_every_result_matches_its_output_schema(call_tool, seed_world):
    from jsonschema import Draft202012Validator

    from mcpsite.mcp import registry

    booking = _reserve(call_tool, seats=["E5", "E6"])
    auth = {"reservation_id": booking["reservation_id"], "reservation_password": "mypassword123"}
    calls = [
        ("get_movie_list", {"date": "2026-02-20"}),
        ("get_show_schedule", {"movie_id": "m001"}),
        ("get_movie_popularity", {}),
        ("get_seat_availability", {"schedule_id": "s001"}),
        ("suggest_seats", {"schedule_id": "s001", "count": 3}),
        ("get_reservation_details", auth),
        ("cancel_reservation", auth),
    ]
    Draft202012Validator(registry.get("reserve_seats").output_schema).validate(booking)
    for name, args in calls:
        spec = registry.get(name)
        assert spec.group == "cinema"
        Draft202012Validator(spec.output_schema).validate(call_tool(name, args))
    names = {spec.name for spec in registry.tools(["cinema"])}
    assert {"get_movie_list", "reserve_seats", "cancel_reservation", "suggest_seats"} <= names


# --- one error pattern, one seat order (the seed's) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params", "detail"),
    [
        (
            "reserve_seats",
            {"schedule_id": "s001", "seats": ["A1", "A1"], "reservation_password": "mypassword123"},
            "seats: Duplicate seat ids: A1",
        ),
        (
            "reserve_seats",
            {"schedule_id": "s001", "seats": ["A1"], "reservation_password": "abc"},
            "reservation_password must be 6 to 128 characters long",
        ),
        (
            "reserve_seats",
            {
                "schedule_id": "s001",
                "seats": ["A1"],
                "reservation_password": "mypassword123",
                "customer_name": "名" * 101,
            },
            "customer_name must be at most 100 characters long",
        ),
        ("get_movie_list", {"limit": 0}, "limit must be 1 or more"),
        ("suggest_seats", {"schedule_id": "s001", "count": 11}, "count must be between 1 and 10"),
    ],
)
def test_invalid_params_keep_the_seeds_pattern(rpc, seed_world, name, params, detail):
    """As the seed's -32600 and 403: a short title in `message`, the detail in `data`."""
    assert rpc(name, params)["error"] == {"code": -32602, "message": "Invalid params", "data": detail}


def test_schema_refusals_keep_the_seeds_pattern(rpc, seed_world):
    """The dispatcher's schema check (mcpsite/mcp/dispatch.py) answers with the detail in `message` today."""
    assert rpc("get_show_schedule", {})["error"] == {
        "code": -32602,
        "message": "Invalid params",
        "data": "'movie_id' is a required property",
    }


def test_reserved_seats_are_in_seat_map_order_everywhere(rpc, seed_world):
    booked = rpc(
        "reserve_seats",
        {"schedule_id": "s001", "seats": ["C5", "a10", "A3", "A2"], "reservation_password": "mypassword123"},
    )["result"]
    assert booked["reserved_seats"] == ["A2", "A3", "A10", "C5"]
    credentials = {"reservation_id": booked["reservation_id"], "reservation_password": "mypassword123"}
    assert rpc("get_reservation_details", credentials)["result"]["reserved_seats"] == booked["reserved_seats"]
    assert rpc("cancel_reservation", credentials)["result"]["released_seats"] == booked["reserved_seats"]
