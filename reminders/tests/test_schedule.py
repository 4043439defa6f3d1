"""Times are aware everywhere: Tokyo (no DST) and another zone's offset both round-trip."""

import datetime
import zoneinfo

import pytest

from mcpsite.core.errors import InvalidParams
from reminders import schedule
from reminders.models import zone_for

TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")


def test_naive_time_is_read_in_tokyo():
    value, tz = schedule.parse_when("2025-09-19T07:00:00", field="start")
    assert tz == "Asia/Tokyo"
    assert value == datetime.datetime(2025, 9, 18, 22, 0, tzinfo=datetime.UTC)
    assert value.isoformat() == "2025-09-19T07:00:00+09:00"


@pytest.mark.parametrize(
    ("text", "tz", "utc"),
    [
        ("2025-09-19T07:00:00+09:00", "+09:00", datetime.datetime(2025, 9, 18, 22, 0, tzinfo=datetime.UTC)),
        ("2025-07-04T09:30:00-04:00", "-04:00", datetime.datetime(2025, 7, 4, 13, 30, tzinfo=datetime.UTC)),
        ("2025-01-10T12:00:00+05:30", "+05:30", datetime.datetime(2025, 1, 10, 6, 30, tzinfo=datetime.UTC)),
        ("2025-01-10T12:00:00Z", "+00:00", datetime.datetime(2025, 1, 10, 12, 0, tzinfo=datetime.UTC)),
    ],
)
def test_offsets_are_kept(text, tz, utc):
    value, zone = schedule.parse_when(text, field="start")
    assert zone == tz
    assert value == utc
    assert value.astimezone(zone_for(zone)).isoformat().replace("+00:00", "Z") == text


@pytest.mark.parametrize("text", ["tomorrow", "2025-09-19", "2025-13-01T07:00:00", "2025-09-19T25:00", "07:00"])
def test_bad_times_are_refused_with_the_field_name(text):
    with pytest.raises(InvalidParams, match="start"):
        schedule.parse_when(text, field="start")


FIRST = datetime.datetime(2025, 9, 19, 7, 0, tzinfo=TOKYO)  # a Friday


@pytest.mark.parametrize(
    ("repeat", "rule", "second"),
    [
        ("daily", "FREQ=DAILY", datetime.datetime(2025, 9, 20, 7, 0, tzinfo=TOKYO)),
        ("Weekly", "FREQ=WEEKLY", datetime.datetime(2025, 9, 26, 7, 0, tzinfo=TOKYO)),
        ("weekdays", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", datetime.datetime(2025, 9, 22, 7, 0, tzinfo=TOKYO)),
        ("monthly", "FREQ=MONTHLY", datetime.datetime(2025, 10, 19, 7, 0, tzinfo=TOKYO)),
        # Issue #24: FREQ=HOURLY and FREQ=YEARLY were accepted, the words refused.
        ("hourly", "FREQ=HOURLY", datetime.datetime(2025, 9, 19, 8, 0, tzinfo=TOKYO)),
        ("Yearly", "FREQ=YEARLY", datetime.datetime(2026, 9, 19, 7, 0, tzinfo=TOKYO)),
        ("毎週月曜", "FREQ=WEEKLY;BYDAY=MO", datetime.datetime(2025, 9, 22, 7, 0, tzinfo=TOKYO)),
        ("平日", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", datetime.datetime(2025, 9, 22, 7, 0, tzinfo=TOKYO)),
        ("毎月", "FREQ=MONTHLY", datetime.datetime(2025, 10, 19, 7, 0, tzinfo=TOKYO)),
        ("FREQ=WEEKLY;BYDAY=MO,WE", "FREQ=WEEKLY;BYDAY=MO,WE", datetime.datetime(2025, 9, 22, 7, 0, tzinfo=TOKYO)),
        ("RRULE:freq=daily;interval=2", "FREQ=DAILY;INTERVAL=2", datetime.datetime(2025, 9, 21, 7, 0, tzinfo=TOKYO)),
    ],
)
def test_repeat_words_and_rrules(repeat, rule, second):
    assert schedule.parse_repeat(repeat, first=FIRST) == rule
    assert schedule.next_occurrence(rule_text=rule, first=FIRST, zone=TOKYO, after=FIRST) == second


@pytest.mark.parametrize(
    ("repeat", "message"),
    [
        ("sometimes", "not understood"),
        ("", "must not be empty"),
        ("FREQ=MINUTELY", "too frequent"),
        ("FREQ=WEEKLY;BYDAY=XX", "not a valid RRULE"),
        ("FREQ=DAILY;UNTIL=20250101T000000Z", "no occurrence"),
        ("FREQ=DAILY;UNTIL=20251001", "not a valid RRULE"),
        ("DTSTART:20250101T000000Z\nRRULE:FREQ=DAILY", "without DTSTART"),
    ],
)
def test_bad_repeats_say_what_is_wrong(repeat, message):
    with pytest.raises(InvalidParams, match=message):
        schedule.parse_repeat(repeat, first=FIRST)


def test_named_zone_keeps_wall_clock_across_dst():
    berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    first = datetime.datetime(2025, 10, 25, 7, 0, tzinfo=berlin)  # the day before DST ends
    following = schedule.next_occurrence(rule_text="FREQ=DAILY", first=first, zone=berlin, after=first)
    assert (following.hour, following.utcoffset()) == (7, datetime.timedelta(hours=1))
    assert following.astimezone(datetime.UTC) - first.astimezone(datetime.UTC) == datetime.timedelta(hours=25)


def test_count_ends_the_rule():
    rule = schedule.parse_repeat("FREQ=DAILY;COUNT=2", first=FIRST)
    second = schedule.next_occurrence(rule_text=rule, first=FIRST, zone=TOKYO, after=FIRST)
    assert schedule.next_occurrence(rule_text=rule, first=FIRST, zone=TOKYO, after=second) is None


# --- rules that would hang or burn a worker, or fire more often than hourly -----------------------


@pytest.mark.parametrize(
    ("repeat", "message"),
    [
        ("FREQ=DAILY;INTERVAL=0", "INTERVAL must be a whole number"),  # dateutil loops for ever
        ("FREQ=DAILY;INTERVAL=-1", "INTERVAL must be a whole number"),  # dateutil raises later
        ("FREQ=DAILY;INTERVAL=1001", "INTERVAL must be a whole number"),
        ("FREQ=HOURLY;FREQ=SECONDLY", "names FREQ more than once"),  # dateutil keeps the last
        ("FREQ=HOURLY;BYMINUTE=0,1,2,3", "BYMINUTE may have one value only"),
        ("FREQ=HOURLY;BYSECOND=1,2", "BYSECOND may have one value only"),
        ("FREQ=HOURLY;BYSETPOS=2", "BYSETPOS is supported with"),  # minutes of CPU in dateutil
        ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", "matches no day"),  # seconds of CPU in dateutil
        ("FREQ=HOURLY;BYMONTH=4;BYMONTHDAY=31", "matches no day"),
        ("FREQ=HOURLY;BYYEARDAY=366;BYMONTH=1", "matches no day"),
        ("FREQ=DAILY;BYWEEKNO=54", "matches no day"),
    ],
)
def test_rules_that_would_hang_or_flood_are_refused(repeat, message):
    """Each of these made dateutil loop for ever or burn seconds of CPU; a regression hangs this test."""
    with pytest.raises(InvalidParams, match=message):
        schedule.parse_repeat(repeat, first=FIRST)


@pytest.mark.parametrize(
    ("repeat", "second"),
    [
        ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29", datetime.datetime(2028, 2, 29, 7, 0, tzinfo=TOKYO)),  # leap days
        ("FREQ=WEEKLY;BYDAY=+1MO;BYMONTH=10", datetime.datetime(2025, 10, 6, 7, 0, tzinfo=TOKYO)),  # ordinal ignored
        ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", datetime.datetime(2025, 9, 30, 7, 0, tzinfo=TOKYO)),
        ("FREQ=HOURLY;INTERVAL=6;BYMINUTE=0", datetime.datetime(2025, 9, 19, 13, 0, tzinfo=TOKYO)),
    ],
)
def test_unusual_but_sound_rules_still_work(repeat, second):
    rule = schedule.parse_repeat(repeat, first=FIRST)
    assert schedule.next_occurrence(rule_text=rule, first=FIRST, zone=TOKYO, after=FIRST) == second


# --- rules that match nothing cost bounded work (issue #17: 50 such rules took 66.8 s of CPU) ---------

IMPOSSIBLE_RULES = [
    "FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=30",
    "FREQ=MONTHLY;BYMONTHDAY=31;BYMONTH=4,6,9,11;BYSETPOS=1",
    "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30",
    "FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31;BYHOUR=1,2,3,4,5,6,7,8,9,10,11,12",
    "FREQ=YEARLY;BYWEEKNO=1;BYMONTH=6",
    "FREQ=YEARLY;BYYEARDAY=200;BYMONTH=1",
    "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29",  # 2025, 2029, … never a leap year
    "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30",
    "FREQ=DAILY;INTERVAL=7;BYDAY=TU",  # from a Friday: only Fridays are visited
    "FREQ=HOURLY;INTERVAL=168;BYDAY=TU",
]


@pytest.fixture
def dateutil_periods(monkeypatch):
    """How many months or years dateutil lays out: its unit of work, counted instead of timed."""
    from dateutil import rrule as du_rrule

    calls = []
    rebuild = du_rrule._iterinfo.rebuild

    def counting(self, year, month):
        calls.append((year, month))
        return rebuild(self, year, month)

    monkeypatch.setattr(du_rrule._iterinfo, "rebuild", counting)
    return calls


def test_fifty_impossible_rules_are_refused_in_bounded_work(dateutil_periods):
    """Before: one such rule made dateutil lay out every month to the year 9999 (~95,000); now each rule looks
    at the periods within the horizon only (at most 120 months or 10 years, a little more for the daily probe)."""
    for repeat in (IMPOSSIBLE_RULES * 5)[:50]:
        with pytest.raises(InvalidParams, match="no occurrence within 10 years|matches no day|INTERVAL with"):
            schedule.parse_repeat(repeat, first=FIRST)
    assert len(dateutil_periods) < 50 * 300


@pytest.mark.parametrize(
    ("repeat", "second"),
    [
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", datetime.datetime(2028, 2, 29, 7, 0, tzinfo=TOKYO)),
        ("FREQ=YEARLY", datetime.datetime(2026, 9, 19, 7, 0, tzinfo=TOKYO)),
        ("FREQ=MONTHLY;BYMONTHDAY=31", datetime.datetime(2025, 10, 31, 7, 0, tzinfo=TOKYO)),
        ("FREQ=MONTHLY;BYDAY=5FR", datetime.datetime(2025, 10, 31, 7, 0, tzinfo=TOKYO)),
        ("FREQ=MONTHLY;INTERVAL=12;BYMONTH=2;BYMONTHDAY=29", None),  # Septembers only: refused below
        ("FREQ=YEARLY;INTERVAL=3;BYMONTH=2;BYMONTHDAY=29", datetime.datetime(2028, 2, 29, 7, 0, tzinfo=TOKYO)),
        ("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE", datetime.datetime(2025, 9, 29, 7, 0, tzinfo=TOKYO)),
    ],
)
def test_monthly_and_yearly_rules_keep_their_meaning(repeat, second):
    if second is None:
        with pytest.raises(InvalidParams, match="no occurrence within 10 years"):
            schedule.parse_repeat(repeat, first=FIRST)
        return
    rule = schedule.parse_repeat(repeat, first=FIRST)
    assert schedule.next_occurrence(rule_text=rule, first=FIRST, zone=TOKYO, after=FIRST) == second
