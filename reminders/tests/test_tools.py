"""The seed's three tools through the real dispatcher: results, owners, and a specific error for each bad input."""

import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpsite.mcp import dispatch
from mcpsite.mcp.registry import CallContext
from reminders.models import Contact, Event, Message, Profile, Reminder

from .conftest import future
from .results import assert_error, assert_ok

pytestmark = pytest.mark.django_db


# --- calendar.create ---------------------------------------------------------------------------


def test_calendar_create_the_seed_example(call_tool, owner):
    event_id = assert_ok(
        call_tool("calendar.create", {"title": "朝ラン", "start": "2025-09-19T07:00:00+09:00", "duration_min": 30}),
        "evt_",
    )
    event = Event.objects.get(public_id=event_id)
    assert (event.owner, event.title, event.duration_min) == (owner, "朝ラン", 30)
    assert event.start_local.isoformat() == "2025-09-19T07:00:00+09:00"


def test_calendar_create_keeps_another_zones_offset_and_trims(call_tool):
    event_id = assert_ok(
        call_tool(
            "calendar.create",
            {
                "title": "  Standup ",
                "start": "2025-11-02T09:00:00-05:00",
                "duration_min": 15.0,
                "description": " daily ",
                "location": "Zoom",
            },
        ),
        "evt_",
    )
    event = Event.objects.get(public_id=event_id)
    assert event.title == "Standup" and event.description == "daily" and event.location == "Zoom"
    assert event.start == datetime.datetime(2025, 11, 2, 14, 0, tzinfo=datetime.UTC)
    assert event.start_local.isoformat() == "2025-11-02T09:00:00-05:00"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"start": "2025-09-19T07:00:00+09:00", "duration_min": 30}, "'title' is a required property"),
        ({"title": "   ", "start": "2025-09-19T07:00:00+09:00", "duration_min": 30}, "title is required"),
        ({"title": "x" * 201, "start": "2025-09-19T07:00:00+09:00", "duration_min": 30}, "title is too long"),
        ({"title": 5, "start": "2025-09-19T07:00:00+09:00", "duration_min": 30}, "title: must be of type string"),
        ({"title": "a", "duration_min": 30}, "'start' is a required property"),
        ({"title": "a", "start": "next friday", "duration_min": 30}, "start must be an ISO 8601"),
        ({"title": "a", "start": "2025-02-30T07:00:00", "duration_min": 30}, "start is not a valid ISO 8601"),
        ({"title": "a", "start": "2025-09-19T07:00:00+09:00"}, "'duration_min' is a required property"),
        ({"title": "a", "start": "2025-09-19T07:00:00+09:00", "duration_min": 0}, "duration_min must be"),
        ({"title": "a", "start": "2025-09-19T07:00:00+09:00", "duration_min": -5}, "duration_min must be"),
        ({"title": "a", "start": "2025-09-19T07:00:00+09:00", "duration_min": 10081}, "from 1 to 10080"),
        ({"title": "a", "start": "2025-09-19T07:00:00+09:00", "duration_min": 1.5}, "whole number"),
        (
            {"title": "a", "start": "2025-09-19T07:00:00+09:00", "duration_min": "30"},
            "duration_min: must be of type number",
        ),
        (
            {"title": "a", "start": "2025-09-19T07:00:00+09:00", "duration_min": 30, "description": "d" * 2001},
            "description is too long",
        ),
        ({"title": "a", "start": "2025-09-19T07:00:00+09:00", "duration_min": 30, "location": ["x"]}, "location"),
        ({"title": "a", "start": "0001-01-01T00:00:00+09:00", "duration_min": 30}, "between the years 1900 and 2999"),
        ({"title": "a\x00", "start": "2025-09-19T07:00:00+09:00", "duration_min": 30}, "title: must not contain NUL"),
    ],
)
def test_calendar_create_bad_input(call_tool, arguments, message):
    assert message in assert_error(call_tool("calendar.create", arguments))
    assert not Event.objects.exists()


# --- message.send ------------------------------------------------------------------------------


def test_message_send_by_name_uses_the_preferred_platform(call_tool, contacts):
    message_id = assert_ok(call_tool("message.send", {"to": "山田花子", "text": "今から向かいます"}), "msg_")
    message = Message.objects.get(public_id=message_id)
    assert (message.contact, message.platform, message.address) == (contacts["hanako"], "email", "hanako@example.com")
    assert message.status == "queued"


def test_message_send_by_id_and_explicit_platform(call_tool, contacts, sms_outbox):
    hanako = contacts["hanako"]
    message_id = assert_ok(call_tool("message.send", {"to": hanako.public_id, "text": "hi", "platform": "sms"}), "msg_")
    assert Message.objects.get(public_id=message_id).address == "+819011112222"


@pytest.mark.parametrize("to", ["山田　花子", "山田 花子", "山田　 花子", " 山田花子 ", "山田  花子"])
def test_message_send_finds_a_whole_name_written_with_spaces(call_tool, contacts, to):
    message_id = assert_ok(call_tool("message.send", {"to": to, "text": "hi"}), "msg_")
    assert Message.objects.get(public_id=message_id).contact == contacts["hanako"]


def test_message_send_whole_name_folds_width_and_case(call_tool, contacts, sms_outbox):
    message_id = assert_ok(call_tool("message.send", {"to": "ＴＡＲＯ　ｓｕｚｕｋｉ", "text": "hi"}), "msg_")
    assert Message.objects.get(public_id=message_id).contact == contacts["taro"]


@pytest.mark.parametrize(("to", "candidates"), [("suzuki", ["taro"]), ("子", ["hanako"]), ("a", ["taro", "taro2"])])
def test_message_send_refuses_part_of_a_name_and_names_the_candidates(call_tool, contacts, to, candidates):
    text = assert_error(call_tool("message.send", {"to": to, "text": "hi"}))
    assert f"No contact matches '{to}'" in text and "whole name or the id" in text
    assert all(f"{contacts[c].name} ({contacts[c].public_id})" in text for c in candidates)
    assert not Message.objects.exists()


def test_message_send_error_shows_a_full_width_space_as_itself(call_tool, contacts):
    text = assert_error(call_tool("message.send", {"to": "山田　太郎", "text": "hi"}))
    assert "'山田　太郎'" in text and "\\u3000" not in text


def test_message_send_ambiguous_names_the_candidates(call_tool, contacts, owner):
    namesake = Contact.objects.create(owner=owner, name="山田　花子", email="other-hanako@example.com")
    text = assert_error(call_tool("message.send", {"to": "山田花子", "text": "hi"}))
    assert "matches several contacts" in text
    assert contacts["hanako"].public_id in text and namesake.public_id in text
    assert not Message.objects.exists()


def test_message_send_unknown_suggests_close_names(call_tool, contacts):
    text = assert_error(call_tool("message.send", {"to": "Taro Suzuky", "text": "hi"}))
    assert "No contact matches 'Taro Suzuky'" in text and "Did you mean" in text and "Taro Suzuki" in text
    assert "No contact matches" in assert_error(call_tool("message.send", {"to": "zzzz", "text": "hi"}))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"text": "hi"}, "'to' is a required property"),
        ({"to": " ", "text": "hi"}, "to is required"),
        ({"to": "山田花子"}, "'text' is a required property"),
        ({"to": "山田花子", "text": "  "}, "text is required"),
        ({"to": "山田花子", "text": "x" * 10_001}, "text is too long"),
        ({"to": "山田花子", "text": "hi", "platform": "fax"}, "platform: must be one of sms, email"),
        ({"to": "Taro Suzuki", "text": "hi", "platform": "email"}, "has no email address"),
        ({"to": "Taro Tanaka", "text": "hi", "platform": "sms"}, "has no phone number"),
        ({"to": "山田花子", "text": "hi", "platform": "sms"}, "SMS is not configured"),
        ({"to": 42, "text": "hi"}, "to: must be of type string"),
        ({"to": "山田花子", "text": "a\x00b"}, "text: must not contain NUL"),
    ],
)
def test_message_send_bad_input(call_tool, contacts, arguments, message):
    assert message in assert_error(call_tool("message.send", arguments))
    assert not Message.objects.exists()


def test_sms_text_cap(call_tool, contacts, sms_outbox):
    assert "at most 1600" in assert_error(call_tool("message.send", {"to": "Taro Suzuki", "text": "x" * 1601}))


# --- reminder.create ---------------------------------------------------------------------------


def test_reminder_create_once_and_repeating(call_tool, owner):
    when = future()
    once = assert_ok(call_tool("reminder.create", {"time": when.isoformat(), "note": "薬を飲む"}), "rem_")
    weekly = assert_ok(
        call_tool(
            "reminder.create", {"time": when.isoformat(), "note": "ゴミ出し", "repeat": "FREQ=WEEKLY;BYDAY=MO,WE"}
        ),
        "rem_",
    )
    first, second = Reminder.objects.get(public_id=once), Reminder.objects.get(public_id=weekly)
    assert first.next_fire_at == when and first.rrule == "" and first.owner == owner
    assert second.rrule == "FREQ=WEEKLY;BYDAY=MO,WE" and second.repeat == "FREQ=WEEKLY;BYDAY=MO,WE"


@pytest.mark.parametrize(
    ("repeat", "rule"),
    [
        ("毎日", "FREQ=DAILY"),
        ("毎週", "FREQ=WEEKLY"),
        ("毎週月曜", "FREQ=WEEKLY;BYDAY=MO"),
        ("毎週水曜日", "FREQ=WEEKLY;BYDAY=WE"),
        ("毎週　金曜", "FREQ=WEEKLY;BYDAY=FR"),
        ("毎週日", "FREQ=WEEKLY;BYDAY=SU"),
        ("平日", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"),
        ("毎月", "FREQ=MONTHLY"),
        ("毎年", "FREQ=YEARLY"),
        ("毎時", "FREQ=HOURLY"),
    ],
)
def test_reminder_create_japanese_repeat_words(call_tool, repeat, rule):
    reminder_id = assert_ok(
        call_tool("reminder.create", {"time": future().isoformat(), "note": "薬を飲む", "repeat": repeat}), "rem_"
    )
    reminder = Reminder.objects.get(public_id=reminder_id)
    assert (reminder.rrule, reminder.repeat) == (rule, repeat)


def test_reminder_create_iso_basic_format(call_tool):
    when = future()
    basic = when.strftime("%Y%m%dT%H%M%S%z")  # 20250919T070000+0900
    reminder = Reminder.objects.get(
        public_id=assert_ok(call_tool("reminder.create", {"time": basic, "note": "n"}), "rem_")
    )
    assert reminder.next_fire_at == when and reminder.tz == "+09:00"


def test_calendar_create_iso_basic_format(call_tool):
    event_id = assert_ok(
        call_tool("calendar.create", {"title": "朝ラン", "start": "20250919T070000+0900", "duration_min": 30}), "evt_"
    )
    assert Event.objects.get(public_id=event_id).start_local.isoformat() == "2025-09-19T07:00:00+09:00"


def test_a_time_without_a_time_of_day_names_the_accepted_forms(call_tool):
    text = assert_error(call_tool("calendar.create", {"title": "a", "start": "20250919", "duration_min": 30}))
    assert "2025-09-19T07:00:00+09:00" in text and "20250919T070000+0900" in text


def test_reminder_create_without_offset_is_tokyo(call_tool):
    when = future().replace(tzinfo=None)
    reminder = Reminder.objects.get(
        public_id=call_tool("reminder.create", {"time": when.isoformat(), "note": "n"})["id"]
    )
    assert reminder.tz == "Asia/Tokyo"
    assert reminder.next_fire_at.astimezone(reminder.zone).replace(tzinfo=None) == when


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"note": "n"}, "'time' is a required property"),
        ({"time": "2020-01-01T07:00:00+09:00", "note": "n"}, "is in the past"),
        ({"time": "soon", "note": "n"}, "time must be an ISO 8601"),
        ({"time": "FUTURE"}, "'note' is a required property"),
        ({"time": "FUTURE", "note": " "}, "note is required"),
        ({"time": "FUTURE", "note": "n" * 1001}, "note is too long"),
        ({"time": "FUTURE", "note": "n", "repeat": "fortnightly"}, "not understood"),
        ({"time": "FUTURE", "note": "n", "repeat": "FREQ=SECONDLY"}, "too frequent"),
        ({"time": "FUTURE", "note": "n", "repeat": "FREQ=DAILY;COUNT=x"}, "not a valid RRULE"),
        ({"time": "FUTURE", "note": "n", "repeat": 7}, "repeat: must be of type string"),
        ({"time": "9999-12-31T23:59:59-12:00", "note": "n"}, "between the years"),
        ({"time": "FUTURE", "note": "n", "repeat": "daily\x00"}, "repeat: must not contain NUL"),
        # These made a worker loop for ever, answered -32603, or bypassed the hourly floor.
        ({"time": "FUTURE", "note": "n", "repeat": "FREQ=DAILY;INTERVAL=0"}, "INTERVAL must be"),
        ({"time": "FUTURE", "note": "n", "repeat": "FREQ=DAILY;INTERVAL=-1"}, "INTERVAL must be"),
        ({"time": "FUTURE", "note": "n", "repeat": "FREQ=HOURLY;FREQ=SECONDLY"}, "more than once"),
        ({"time": "FUTURE", "note": "n", "repeat": "FREQ=HOURLY;BYSECOND=1,2,3"}, "one value only"),
        ({"time": "FUTURE", "note": "n", "repeat": "FREQ=HOURLY;BYSETPOS=2"}, "BYSETPOS"),
        ({"time": "FUTURE", "note": "n", "repeat": "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"}, "matches no day"),
    ],
)
def test_reminder_create_bad_input(call_tool, arguments, message):
    arguments = {k: future().isoformat() if v == "FUTURE" else v for k, v in arguments.items()}
    assert message in assert_error(call_tool("reminder.create", arguments))
    assert not Reminder.objects.exists()


def test_reminder_needs_somewhere_to_deliver(call_tool, owner):
    owner.email = ""
    owner.save()
    assert "no email address or webhook URL" in assert_error(
        call_tool("reminder.create", {"time": future().isoformat(), "note": "n"})
    )
    Profile.objects.create(owner=owner, webhook_url="https://hooks.example.com/r")
    assert_ok(call_tool("reminder.create", {"time": future().isoformat(), "note": "n"}), "rem_")


# --- owners ------------------------------------------------------------------------------------


def test_one_key_never_sees_another_owners_contacts(call_tool, contacts, make_api_key, django_user_model):
    stranger = django_user_model.objects.create_user(username="stranger", email="s@example.com")
    key, _raw = make_api_key(owner=stranger)
    ctx = CallContext(transport="test", request_id="r1", api_key=key, owner=stranger)
    text = assert_error(call_tool("message.send", {"to": contacts["hanako"].public_id, "text": "hi"}, ctx=ctx))
    assert "No contact matches" in text and "山田花子" not in text
    event_id = call_tool("calendar.create", {"title": "x", "start": "2025-09-19T07:00:00", "duration_min": 5}, ctx=ctx)[
        "id"
    ]
    assert Event.objects.get(public_id=event_id).owner == stranger


def test_no_owner_is_an_error_not_a_crash():
    ctx = CallContext(transport="stdio", request_id="r2")
    for name, arguments in [
        ("calendar.create", {"title": "x", "start": "2025-09-19T07:00:00", "duration_min": 5}),
        ("message.send", {"to": "x", "text": "y"}),
        ("reminder.create", {"time": future().isoformat(), "note": "n"}),
    ]:
        result = dispatch.call_tool(ctx, name, arguments).data
        assert result["status"] == "error" and "owner is required" in result["error"]


def test_rpc_transport_returns_the_seed_shape(http_post):
    response = http_post(
        "/rpc",
        {
            "jsonrpc": "2.0",
            "id": "req_123",
            "method": "calendar.create",
            "params": {"title": "朝ラン", "start": "2025-09-19T07:00:00+09:00", "duration_min": 30},
        },
    )
    body = response.json()
    assert body["id"] == "req_123" and body["result"]["status"] == "ok" and body["result"]["id"].startswith("evt_")


# --- any input at all --------------------------------------------------------------------------

ANY = st.one_of(st.text(max_size=40), st.integers(), st.floats(allow_nan=True), st.none(), st.booleans())
WHEN = st.one_of(st.text(max_size=30), st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tool=st.sampled_from(["calendar.create", "message.send", "reminder.create"]),
    arguments=st.fixed_dictionaries(
        {},
        optional={
            "title": ANY,
            "start": WHEN,
            "duration_min": ANY,
            "description": ANY,
            "location": ANY,
            "to": ANY,
            "text": ANY,
            "platform": ANY,
            "time": WHEN,
            "note": ANY,
            "repeat": ANY,
        },
    ),
)
def test_no_input_crashes_a_tool(call_tool, contacts, tool, arguments):
    """Whatever an agent sends, the answer is the seed's shape: never an internal error."""
    result = call_tool(tool, arguments)
    assert result["status"] in {"ok", "error"}
    if result["status"] == "error":
        assert result["error"]
