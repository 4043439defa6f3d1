"""`manage.py search_index rebuild`: rebuild the product search index, with a progress bar.

With MEILISEARCH_URL set: recreate the Meilisearch index (settings + every product). Without it:
recompute the normalised search keys and rebuild the database's trigram index.
"""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from merchant import meili, services
from merchant.models import Product


class Command(BaseCommand):
    help = "Rebuild the product search index (Meilisearch when MEILISEARCH_URL is set, else the database's)."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["rebuild"])
        parser.add_argument("--batch-size", type=int, default=1000)

    def handle(self, *args, action: str, batch_size: int, **options):
        total = Product.objects.count()
        with tqdm(total=total, desc="products", unit="doc", disable=options["verbosity"] == 0) as bar:
            if settings.MEILISEARCH_URL:
                try:
                    count = meili.rebuild(batch_size=batch_size, progress=bar.update)
                except meili.FAILURES + (meili.SearchBackendError,) as exc:
                    raise CommandError(f"Meilisearch rebuild failed: {type(exc).__name__}: {exc}") from exc
                where = f"Meilisearch index {settings.MEILISEARCH_INDEX!r} at {settings.MEILISEARCH_URL}"
            else:
                count = services.search_keys_rebuild(batch_size=batch_size, progress=bar.update)
                where = "the database search index"
        self.stdout.write(f"Indexed {count} products into {where}.")
