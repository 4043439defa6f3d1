"""PostgreSQL triggers that make the database itself keep the books balanced and immutable.

- `ledger_entry_balanced` (deferred constraint triggers on lines and entries): at COMMIT every
  touched entry must have at least two lines and equal debit and credit totals, however the rows
  were written (ORM, `.update()`, raw SQL).
- `ledger_*_immutable` (BEFORE UPDATE/DELETE): posted lines never change; an entry's date,
  description and reversal link never change. Corrections are reversal entries. (TRUNCATE, used
  by test flushes and full resets, is not a row operation and is not affected.)

SQLite has no deferred triggers; there the service enforces the same rules.
"""

from django.db import migrations

from mcpsite.core.migrations import RunSQLOn

CREATE_SQL = r"""
CREATE OR REPLACE FUNCTION ledger_assert_entry_balanced(eid uuid) RETURNS void AS $$
DECLARE
    n integer;
    d numeric;
    c numeric;
BEGIN
    IF eid IS NULL OR NOT EXISTS (SELECT 1 FROM ledger_journalentry WHERE id = eid) THEN
        RETURN;
    END IF;
    SELECT count(*), coalesce(sum(debit), 0), coalesce(sum(credit), 0) INTO n, d, c
      FROM ledger_journalline WHERE entry_id = eid;
    IF n < 2 THEN
        RAISE EXCEPTION 'journal entry % has % line(s); at least 2 are required', eid, n
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entry_balanced';
    END IF;
    IF d <> c THEN
        RAISE EXCEPTION 'journal entry % does not balance: debits % <> credits %', eid, d, c
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entry_balanced';
    END IF;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION ledger_line_balanced_trigger() RETURNS trigger AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM ledger_assert_entry_balanced(OLD.entry_id);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM ledger_assert_entry_balanced(NEW.entry_id);
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION ledger_entry_balanced_trigger() RETURNS trigger AS $$
BEGIN
    PERFORM ledger_assert_entry_balanced(NEW.id);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE CONSTRAINT TRIGGER ledger_line_balanced
    AFTER INSERT OR UPDATE OR DELETE ON ledger_journalline
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_line_balanced_trigger();

CREATE CONSTRAINT TRIGGER ledger_entry_balanced
    AFTER INSERT OR UPDATE ON ledger_journalentry
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_entry_balanced_trigger();

CREATE OR REPLACE FUNCTION ledger_line_immutable() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'posted journal lines cannot be changed or deleted; post a reversal entry instead'
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER ledger_line_immutable
    BEFORE UPDATE OR DELETE ON ledger_journalline
    FOR EACH ROW EXECUTE FUNCTION ledger_line_immutable();

CREATE OR REPLACE FUNCTION ledger_entry_immutable() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'posted journal entries cannot be deleted; post a reversal entry instead'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    -- created_by may still be cleared when a user is deleted (ON DELETE SET NULL).
    IF (NEW.id, NEW.date, NEW.description, NEW.reversal_of_id, NEW.created_at)
       IS DISTINCT FROM (OLD.id, OLD.date, OLD.description, OLD.reversal_of_id, OLD.created_at) THEN
        RAISE EXCEPTION 'posted journal entries cannot be changed; post a reversal entry instead'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER ledger_entry_immutable
    BEFORE UPDATE OR DELETE ON ledger_journalentry
    FOR EACH ROW EXECUTE FUNCTION ledger_entry_immutable();
"""

DROP_SQL = r"""
DROP TRIGGER IF EXISTS ledger_entry_immutable ON ledger_journalentry;
DROP TRIGGER IF EXISTS ledger_line_immutable ON ledger_journalline;
DROP TRIGGER IF EXISTS ledger_entry_balanced ON ledger_journalentry;
DROP TRIGGER IF EXISTS ledger_line_balanced ON ledger_journalline;
DROP FUNCTION IF EXISTS ledger_entry_immutable();
DROP FUNCTION IF EXISTS ledger_line_immutable();
DROP FUNCTION IF EXISTS ledger_entry_balanced_trigger();
DROP FUNCTION IF EXISTS ledger_line_balanced_trigger();
DROP FUNCTION IF EXISTS ledger_assert_entry_balanced(uuid);
"""


class Migration(migrations.Migration):
    dependencies = [("ledger", "0001_initial")]

    operations = [RunSQLOn("postgresql", [CREATE_SQL], [DROP_SQL])]
