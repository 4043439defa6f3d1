"""The per-owner iCalendar feed (RFC 5545), for Google Calendar / Apple Calendar subscriptions."""

from __future__ import annotations

import datetime

import icalendar
from django.utils import timezone

from . import selectors
from .models import Profile

FEED_PAST_DAYS = 90
FEED_MAX_EVENTS = 2000
FEED_MAX_REMINDERS = 500


def _host(site_url: str) -> str:
    return site_url.split("://", 1)[-1].split("/", 1)[0] or "mcpsite"


def feed_build(*, profile: Profile, site_url: str) -> bytes:
    """The owner's events (from 90 days ago on) and active reminders, as one VCALENDAR."""
    host = _host(site_url)
    now = timezone.now()
    calendar = icalendar.Calendar.new(
        name=f"InnerVoice – {profile.owner.get_username()}",
        prodid="-//mcpsite//InnerVoice reminders//EN",
        refresh_interval=datetime.timedelta(minutes=15),
    )
    calendar.add("X-PUBLISHED-TTL", "PT15M")
    for event in selectors.feed_events(
        owner=profile.owner, since=now - datetime.timedelta(days=FEED_PAST_DAYS), limit=FEED_MAX_EVENTS
    ):
        component = icalendar.Event()
        component.add("UID", f"{event.public_id}@{host}")
        component.add("DTSTAMP", event.created_at)
        component.add("DTSTART", event.start.astimezone(datetime.UTC))
        component.add("DTEND", event.end.astimezone(datetime.UTC))
        component.add("SUMMARY", event.title)
        if event.description:
            component.add("DESCRIPTION", event.description)
        if event.location:
            component.add("LOCATION", event.location)
        calendar.add_component(component)
    for reminder in selectors.feed_reminders(owner=profile.owner, limit=FEED_MAX_REMINDERS):
        component = icalendar.Event()
        component.add("UID", f"{reminder.public_id}@{host}")
        component.add("DTSTAMP", reminder.created_at)
        # Repeats are expanded in the zone they were written in, so the feed says the same.
        start = reminder.time.astimezone(reminder.zone)
        if not reminder.tz.startswith(("+", "-")):
            component.add("DTSTART", start)
        else:
            component.add("DTSTART", start.astimezone(datetime.UTC))
        component.add("DURATION", datetime.timedelta(0))
        component.add("SUMMARY", f"⏰ {reminder.note[:80]}")
        component.add("DESCRIPTION", reminder.note)
        component.add("CATEGORIES", ["Reminder"])
        if reminder.rrule:
            component.add("RRULE", icalendar.vRecur.from_ical(reminder.rrule))
        alarm = icalendar.Alarm()
        alarm.add("ACTION", "DISPLAY")
        alarm.add("DESCRIPTION", reminder.note[:200])
        alarm.add("TRIGGER", datetime.timedelta(0))
        component.add_component(alarm)
        calendar.add_component(component)
    calendar.add_missing_timezones()
    return calendar.to_ical()
