from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import ngettext

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
        message = ngettext(
            "Deleted %(count)d tool-call record older than %(days)d day(s).",
            "Deleted %(count)d tool-call records older than %(days)d day(s).",
            deleted,
        )
        self.stdout.write(message % {"count": deleted, "days": days})
