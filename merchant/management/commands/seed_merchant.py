"""`manage.py seed_merchant [--scale N]`: the seed's products (idempotent) and N synthetic ones."""

from itertools import islice

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from tqdm import tqdm

from merchant import services
from merchant.catalog import SEED_PRODUCTS, seed_products, synthetic_products
from merchant.models import Product


class Command(BaseCommand):
    help = "Create the merchant demo catalogue (むぎぼーカレンダー2025 …); --scale N adds N generated products."

    def add_arguments(self, parser):
        parser.add_argument("--scale", type=int, default=0, help="also create N generated products (e.g. 100000)")
        parser.add_argument("--batch-size", type=int, default=2000)

    def handle(self, *args, scale: int, batch_size: int, **options):
        created = 0
        for product in seed_products():
            fields = {
                f.attname: getattr(product, f.attname) for f in Product._meta.concrete_fields if f.attname != "id"
            }
            for auto in (*Product.SEARCH_KEY_FIELDS, "created_at", "updated_at"):
                fields.pop(auto)
            _obj, was_created = Product.objects.get_or_create(sku=product.sku, defaults=fields)
            created += was_created
        self.stdout.write(f"Seed products: {created} created, {len(SEED_PRODUCTS) - created} already there")
        if scale > 0:
            before = Product.objects.filter(sku__startswith="GEN-").count()
            generated = synthetic_products(scale)
            with tqdm(total=scale, desc="products", unit="row", disable=options["verbosity"] == 0) as bar:
                while batch := list(islice(generated, batch_size)):
                    with transaction.atomic():
                        # ignore_conflicts: re-running skips the SKUs that exist (idempotent).
                        Product.objects.bulk_create(batch, ignore_conflicts=True)
                    bar.update(len(batch))
            after = Product.objects.filter(sku__startswith="GEN-").count()
            self.stdout.write(f"Generated products: {after - before} created, {after} in total")
            services.search_statistics_refresh()
            if settings.MEILISEARCH_URL:
                self.stdout.write("Bulk rows skip the on-commit sync: run `manage.py search_index rebuild`.")
