from django.core.management.base import BaseCommand

from mcpsite.core.limits import rate_windows_prune


class Command(BaseCommand):
    help = "Delete rate-limit windows (database store) whose every counted call has left its period."

    def handle(self, *args, **options):
        deleted = rate_windows_prune()
        self.stdout.write(f"Deleted {deleted} spent rate-limit window(s).")
