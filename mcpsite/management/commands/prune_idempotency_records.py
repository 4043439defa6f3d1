from django.core.management.base import BaseCommand
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from mcpsite.idempotency import idempotency_records_prune


class Command(BaseCommand):
    help = "Delete idempotency records older than MCP_IDEMPOTENCY_RETENTION (docs/idempotency.md), in batches."

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=1000, help="Records deleted per transaction.")

    def handle(self, *args, batch, **options):
        def progress(total: int) -> None:
            self.stdout.write(gettext("… %(count)d deleted so far") % {"count": total})

        deleted = idempotency_records_prune(now=timezone.now(), batch=max(batch, 1), progress=progress)
        message = ngettext(
            "Deleted %(count)d idempotency record past its retention.",
            "Deleted %(count)d idempotency records past their retention.",
            deleted,
        )
        self.stdout.write(message % {"count": deleted})
