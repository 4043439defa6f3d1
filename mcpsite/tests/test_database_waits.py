"""Bounded waits on PostgreSQL: a statement and a lock wait end at their timeouts, so work queued behind one table's
lock gives its connection back while calls on other tables go on; pooled connections are checked before use."""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from django.db import OperationalError, connection

from mcpsite.checks import settings_problems
from mcpsite.models import ApiKey, ToolCall

from .concurrency import held_in_another_transaction


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_connections_carry_the_statement_and_lock_timeouts():
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        statement = cursor.fetchone()[0]
        cursor.execute("SHOW lock_timeout")
        lock = cursor.fetchone()[0]
    assert (statement, lock) == ("30s", "5s")
    assert settings.DATABASES["default"]["OPTIONS"]["pool"]["check"] is not None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_lock_held_on_one_table_fails_only_the_work_that_waits_for_it():
    """Another session holds ACCESS EXCLUSIVE on the audit table (a long migration, a manual LOCK): a query on it
    gives up after the lock timeout, and a query on another table answers at once."""

    def lock_the_audit_table():
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {ToolCall._meta.db_table} IN ACCESS EXCLUSIVE MODE")

    with held_in_another_transaction(lock_the_audit_table):
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '500ms'")  # the 5 s default, shortened for the test
        try:
            started = time.monotonic()
            with pytest.raises(OperationalError, match="lock timeout"):
                ToolCall.objects.count()
            assert time.monotonic() - started < 5
            assert ApiKey.objects.count() == 0  # another table: no wait
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")


def test_a_timeout_that_is_not_a_number_stops_the_checks(settings):
    settings.DATABASE_LOCK_TIMEOUT = "five"
    assert [p.id for p in settings_problems()] == ["mcpsite.E040"]
    settings.DATABASE_LOCK_TIMEOUT = "0"  # 0: no limit
    assert settings_problems() == []
