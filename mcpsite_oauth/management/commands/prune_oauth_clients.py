from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import ngettext

from mcpsite_oauth.services import unused_clients_prune


class Command(BaseCommand):
    help = "Delete self-registered OAuth clients older than --hours that never completed an authorization."

    def add_arguments(self, parser):
        parser.add_argument("--hours", type=int, default=settings.OAUTH_UNUSED_CLIENT_HOURS)

    def handle(self, *args, hours, **options):
        try:
            deleted = unused_clients_prune(older_than_hours=hours)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        message = ngettext(
            "Deleted %(count)d OAuth client that never completed an authorization.",
            "Deleted %(count)d OAuth clients that never completed an authorization.",
            deleted,
        )
        self.stdout.write(message % {"count": deleted})
