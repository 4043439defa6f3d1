"""Demo data for geo: saved lookups with well-known points, ready to resolve from the admin."""

from django.core.management.base import BaseCommand

from geo.models import PointLookup
from geo.services import point_lookup_refresh

SAMPLES = {
    "付録A サンプル (admin)": (
        "admin",
        [
            {"ref": "p1", "lat": 35.68283, "lon": 139.75945},
            {"lat": 35.6895, "lon": 139.6917},
            {"ref": "p3", "lat": 0.0, "lon": 0.0},
        ],
    ),
    "千葉の2地点 (estat)": (
        "estat",
        [{"ref": "一宮", "lat": 35.37, "lon": 140.36}, {"ref": "船橋", "lat": 35.74, "lon": 140.02}],
    ),
    "千葉の2地点 (jarl)": (
        "jarl",
        [{"ref": "一宮", "lat": 35.37, "lon": 140.36}, {"ref": "船橋", "lat": 35.74, "lon": 140.02}],
    ),
}


class Command(BaseCommand):
    help = "Create demo point lookups (idempotent). --resolve also resolves them through GaluchatAPI."

    def add_arguments(self, parser):
        parser.add_argument("--resolve", action="store_true", help="Call GaluchatAPI now (needs network access).")

    def handle(self, *args, resolve=False, **options):
        for name, (granularity, points) in SAMPLES.items():
            assert isinstance(points, list)
            lookup, created = PointLookup.objects.get_or_create(
                name=name, defaults={"granularity": granularity, "points": points, "point_count": len(points)}
            )
            if resolve:
                lookup = point_lookup_refresh(lookup=lookup)
            self.stdout.write(f"{'created' if created else 'exists '} {lookup} [{lookup.outcome}]")
