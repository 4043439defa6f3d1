from django.core.management.base import BaseCommand, CommandError

from mcpsite.services import tool_calls_prune


class Command(BaseCommand):
    help = "Delete tool-call audit records older than --days (default 90)."

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=90)

    def handle(self, *args, days, **options):
        try:
            deleted = tool_calls_prune(older_than_days=days)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Deleted {deleted} tool-call record(s) older than {days} day(s).")
