"""manage.py seed_ledger [--scale N] [--no-sample]: the chart of accounts, a sample year, bulk entries."""

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from ledger import seeding, selectors


class Command(BaseCommand):
    help = "Seed the ledger: a Japanese small-business chart of accounts and a sample fiscal year (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--scale", type=int, default=0, metavar="N", help="also ensure N generated two-line entries (2N lines)"
        )
        parser.add_argument("--no-sample", action="store_true", help="skip the sample fiscal year")

    def handle(self, *args, scale: int, no_sample: bool, **options):
        if scale < 0:
            raise CommandError("--scale must not be negative")
        created = seeding.chart_of_accounts_ensure()
        self.stdout.write(f"Chart of accounts: {len(seeding.CHART)} accounts ({created} new)")
        if not no_sample:
            added = seeding.sample_year_ensure()
            self.stdout.write(f"Sample fiscal year from {seeding.YEAR_START}: {added} entries added")
        if scale:
            with tqdm(total=scale, unit="entry", desc="seed_ledger", disable=options["verbosity"] == 0) as bar:
                added = seeding.scale_entries_ensure(scale, progress=bar.update)
            self.stdout.write(f"Generated entries: {added} added ({scale} requested, {2 * scale} lines)")
        unbalanced = selectors.unbalanced_entry_ids()
        if unbalanced:
            raise CommandError(f"{len(unbalanced)} unbalanced entries found, e.g. {unbalanced[0]}")
        self.stdout.write(self.style.SUCCESS("Ledger seeded; every entry balances."))
