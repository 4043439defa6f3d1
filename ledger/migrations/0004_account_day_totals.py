"""Each account's debit and credit totals per day, kept by triggers on the journal lines, on both backends.

The reports and the dashboard read these (at most accounts × days rows) instead of every line. A trigger, not the
posting service, keeps them, so a line written any way (the service, the bulk seeder, raw SQL) is counted. Lines are
immutable on PostgreSQL (migration 0002 refuses UPDATE and DELETE); SQLite has no such guard, so there UPDATE and
DELETE of a line adjust the totals too. Amounts are whole cents. The existing lines are summed in once.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from mcpsite.core.migrations import RunSQLOn

POSTGRESQL = [
    r"""
CREATE OR REPLACE FUNCTION ledger_line_day_total() RETURNS trigger AS $$
BEGIN
    INSERT INTO ledger_accountdaytotal (account_id, date, debit_cents, credit_cents)
    SELECT NEW.account_id, e.date, NEW.debit * 100, NEW.credit * 100
      FROM ledger_journalentry e WHERE e.id = NEW.entry_id
    ON CONFLICT (account_id, date) DO UPDATE
       SET debit_cents = ledger_accountdaytotal.debit_cents + EXCLUDED.debit_cents,
           credit_cents = ledger_accountdaytotal.credit_cents + EXCLUDED.credit_cents;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql
""",
    """CREATE TRIGGER ledger_line_day_total AFTER INSERT ON ledger_journalline
    FOR EACH ROW EXECUTE FUNCTION ledger_line_day_total()""",
    """INSERT INTO ledger_accountdaytotal (account_id, date, debit_cents, credit_cents)
    SELECT l.account_id, e.date, SUM(l.debit) * 100, SUM(l.credit) * 100
      FROM ledger_journalline l JOIN ledger_journalentry e ON e.id = l.entry_id
     GROUP BY l.account_id, e.date""",
]
POSTGRESQL_REVERSE = [
    "DROP TRIGGER IF EXISTS ledger_line_day_total ON ledger_journalline",
    "DROP FUNCTION IF EXISTS ledger_line_day_total()",
]

# SQLite keeps a line's amounts as REAL: ROUND(x * 100) is its exact whole cents.
SQLITE_ADD = """INSERT INTO ledger_accountdaytotal (account_id, date, debit_cents, credit_cents)
    SELECT NEW.account_id, e.date, CAST(ROUND(NEW.debit * 100) AS INTEGER), CAST(ROUND(NEW.credit * 100) AS INTEGER)
      FROM ledger_journalentry e WHERE e.id = NEW.entry_id
    ON CONFLICT (account_id, date) DO UPDATE
       SET debit_cents = debit_cents + excluded.debit_cents, credit_cents = credit_cents + excluded.credit_cents;"""
SQLITE_SUBTRACT = """UPDATE ledger_accountdaytotal
       SET debit_cents = debit_cents - CAST(ROUND(OLD.debit * 100) AS INTEGER),
           credit_cents = credit_cents - CAST(ROUND(OLD.credit * 100) AS INTEGER)
     WHERE account_id = OLD.account_id
       AND date = (SELECT e.date FROM ledger_journalentry e WHERE e.id = OLD.entry_id);"""
SQLITE = [
    f"CREATE TRIGGER ledger_line_day_total_insert AFTER INSERT ON ledger_journalline BEGIN {SQLITE_ADD} END",
    f"CREATE TRIGGER ledger_line_day_total_delete AFTER DELETE ON ledger_journalline BEGIN {SQLITE_SUBTRACT} END",
    "CREATE TRIGGER ledger_line_day_total_update AFTER UPDATE OF entry_id, account_id, debit, credit "
    f"ON ledger_journalline BEGIN {SQLITE_SUBTRACT} {SQLITE_ADD} END",
    """INSERT INTO ledger_accountdaytotal (account_id, date, debit_cents, credit_cents)
    SELECT l.account_id, e.date, SUM(CAST(ROUND(l.debit * 100) AS INTEGER)), SUM(CAST(ROUND(l.credit * 100) AS INTEGER))
      FROM ledger_journalline l JOIN ledger_journalentry e ON e.id = l.entry_id
     GROUP BY l.account_id, e.date""",
]
SQLITE_REVERSE = [
    "DROP TRIGGER IF EXISTS ledger_line_day_total_insert",
    "DROP TRIGGER IF EXISTS ledger_line_day_total_delete",
    "DROP TRIGGER IF EXISTS ledger_line_day_total_update",
]


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0003_verbose_names_i18n"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="AccountDayTotal",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("date", models.DateField(verbose_name="date")),
                (
                    "debit_cents",
                    models.DecimalField(decimal_places=0, default=0, max_digits=38, verbose_name="debit (cents)"),
                ),
                (
                    "credit_cents",
                    models.DecimalField(decimal_places=0, default=0, max_digits=38, verbose_name="credit (cents)"),
                ),
            ],
            options={
                "verbose_name": "account day total",
                "verbose_name_plural": "account day totals",
            },
        ),
        migrations.AddIndex(
            model_name="journalentry",
            index=models.Index(fields=["date", "created_at", "id"], name="ledger_entry_list_order_idx"),
        ),
        migrations.AddIndex(
            model_name="journalline",
            index=models.Index(fields=["account", "entry"], name="ledger_line_account_entry_idx"),
        ),
        migrations.AddField(
            model_name="accountdaytotal",
            name="account",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="ledger.account",
                verbose_name="account",
            ),
        ),
        migrations.AddConstraint(
            model_name="accountdaytotal",
            constraint=models.UniqueConstraint(fields=("account", "date"), name="ledger_day_total_unique"),
        ),
        RunSQLOn("postgresql", POSTGRESQL, POSTGRESQL_REVERSE),
        RunSQLOn("sqlite", SQLITE, SQLITE_REVERSE),
    ]
