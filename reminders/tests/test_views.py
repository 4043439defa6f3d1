"""The iCalendar feed: events and reminders per owner, behind a rotatable secret URL."""

import datetime

import icalendar
import pytest

from reminders import services
from reminders.models import Event

from .conftest import TOKYO

pytestmark = pytest.mark.django_db


def test_feed_has_events_and_repeating_reminders(client, owner, django_user_model):
    services.event_create(
        owner=owner,
        title="朝ラン",
        start=datetime.datetime(2030, 9, 19, 7, tzinfo=TOKYO),
        tz="Asia/Tokyo",
        duration_min=30,
        location="公園",
    )
    first = datetime.datetime(2030, 9, 19, 8, tzinfo=TOKYO)
    services.reminder_create(
        owner=owner, time=first, tz="Asia/Tokyo", note="水を飲む", repeat="FREQ=WEEKLY;BYDAY=MO,WE"
    )
    stranger = django_user_model.objects.create_user(username="other")
    Event.objects.create(owner=stranger, title="secret", start=first, tz="+09:00", duration_min=5)
    profile = services.profile_get_or_create(owner=owner)

    response = client.get(profile.feed_path)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/calendar")
    calendar = icalendar.Calendar.from_ical(response.content)
    events = {str(e["SUMMARY"]): e for e in calendar.walk("VEVENT")}
    assert set(events) == {"朝ラン", "⏰ 水を飲む"}
    run = events["朝ラン"]
    assert run.decoded("DTSTART") == datetime.datetime(2030, 9, 18, 22, tzinfo=datetime.UTC)
    assert run.decoded("DTEND") - run.decoded("DTSTART") == datetime.timedelta(minutes=30)
    reminder = events["⏰ 水を飲む"]
    assert reminder.decoded("DTSTART") == first and str(reminder["DTSTART"].params["TZID"]) == "Asia/Tokyo"
    assert reminder["RRULE"].to_ical() == b"FREQ=WEEKLY;BYDAY=MO,WE"
    assert reminder.walk("VALARM")
    assert [tz["TZID"] for tz in calendar.walk("VTIMEZONE")] == ["Asia/Tokyo"]


def test_rotating_the_token_retires_the_old_url(client, owner):
    profile = services.profile_get_or_create(owner=owner)
    old = profile.feed_path
    services.profile_rotate_feed_token(profile=profile)
    assert client.get(old).status_code == 404
    assert client.get(profile.feed_path).status_code == 200
    assert client.get("/calendar/nonsense.ics").status_code == 404
    assert client.post(profile.feed_path).status_code == 405
