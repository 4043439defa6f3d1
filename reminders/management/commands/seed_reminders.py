"""Demo contacts, events and reminders for one user: `manage.py seed_reminders [--user demo]`. Idempotent."""

import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.utils import timezone

from reminders import services
from reminders.models import Contact, Event, Reminder, zone_for

CONTACTS = [
    {"name": "山田花子", "email": "hanako@example.com", "phone": "+819011112222", "preferred_platform": "email"},
    {"name": "鈴木太郎", "email": "", "phone": "+819033334444", "preferred_platform": "sms"},
    {"name": "Alice Smith", "email": "alice@example.com", "phone": "", "preferred_platform": "email"},
]
EVENTS = [  # (title, days from today, hour, minutes, location)
    ("朝ラン", 1, 7, 30, "代々木公園"),
    ("チーム定例", 2, 10, 60, "会議室A"),
    ("歯医者", 5, 16, 45, "駅前デンタル"),
]
REMINDERS = [  # (note, days from today, hour, repeat)
    ("水を飲む", 1, 8, "daily"),
    ("ゴミ出し", 1, 7, "FREQ=WEEKLY;BYDAY=MO,TH"),
    ("家賃の振込", 1, 9, "monthly"),
]
DEMO_NOTE = "デモ: このリマインダーは db_worker が配信します"


class Command(BaseCommand):
    help = "Create demo contacts, events and reminders for a user (default 'demo'); safe to run again."

    def add_arguments(self, parser):
        parser.add_argument("--user", default="demo", help="Owner username (created if missing).")

    def handle(self, *, user: str, **options):
        owner, created = get_user_model().objects.get_or_create(
            username=user, defaults={"email": f"{user}@example.com"}
        )
        if not owner.email:
            owner.email = f"{user}@example.com"
            owner.save(update_fields=["email"])
        zone = zone_for(settings.TIME_ZONE)
        today = timezone.now().astimezone(zone).replace(second=0, microsecond=0)
        for row in CONTACTS:
            Contact.objects.get_or_create(owner=owner, name=row["name"], defaults=row)
        for title, days, hour, minutes, location in EVENTS:
            start = (today + datetime.timedelta(days=days)).replace(hour=hour, minute=0)
            if not Event.objects.filter(owner=owner, title=title, start__gte=today).exists():
                services.event_create(
                    owner=owner,
                    title=title,
                    start=start,
                    tz=settings.TIME_ZONE,
                    duration_min=minutes,
                    location=location,
                )
        for note, days, hour, repeat in REMINDERS:
            if not Reminder.objects.filter(owner=owner, note=note, next_fire_at__isnull=False).exists():
                at = (today + datetime.timedelta(days=days)).replace(hour=hour, minute=0)
                services.reminder_create(owner=owner, time=at, tz=settings.TIME_ZONE, note=note, repeat=repeat)
        if not Reminder.objects.filter(owner=owner, note=DEMO_NOTE, next_fire_at__isnull=False).exists():
            # Due two minutes from now, so a first `make demo` shows a delivery in var/mail.
            services.reminder_create(
                owner=owner, time=today + datetime.timedelta(minutes=2), tz=settings.TIME_ZONE, note=DEMO_NOTE
            )
        profile = services.profile_get_or_create(owner=owner)  # the feed token, shown in the admin (Profiles)
        counts = [Model.objects.filter(owner=owner).count() for Model in (Contact, Event, Reminder)]
        self.stdout.write(
            f"reminders: {'created' if created else 'updated'} demo data for {owner.username}: "
            f"{counts[0]} contacts, {counts[1]} events, {counts[2]} reminders "
            f"(calendar feed URL: admin › Reminders › Profiles › {profile})"
        )
