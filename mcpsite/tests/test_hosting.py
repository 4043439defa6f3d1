"""`hosting()` (mcpsite/core/db.py): the services' blocks inside a host's transaction are savepoints of it, and on
PostgreSQL their RELEASE waits for the host's COMMIT (one statement less each), with the savepoints' semantics
unchanged: what a block that fails wrote is rolled back, what the host wrote before it is kept."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from mcpsite.core.db import durable, hosting
from mcpsite.core.errors import Conflict
from mcpsite.models import IdempotencyRecord

pytestmark = pytest.mark.django_db


def write(key: str) -> None:
    IdempotencyRecord.objects.create(
        principal="p", tool="t", key=key, arguments_digest="d", outcome="ok", result="{}", created_at=timezone.now()
    )


def keys() -> list[str]:
    return sorted(IdempotencyRecord.objects.values_list("key", flat=True))


@pytest.mark.postgres
def test_no_release_is_sent_before_the_commit():
    sent: list[str] = []

    def record(execute, sql, params, many, context):
        sent.append(sql.split()[0])
        return execute(sql, params, many, context)

    with hosting(), connection.execute_wrapper(record):  # inside the host's own wrapper: what reaches the driver
        write("claim")
        with durable():
            write("w1")
        with durable():
            write("w2")
    assert sent == ["INSERT", "SAVEPOINT", "INSERT", "SAVEPOINT", "INSERT"]
    assert keys() == ["claim", "w1", "w2"]


def test_a_domain_error_in_a_block_rolls_back_its_write_and_keeps_the_hosts(django_capture_on_commit_callbacks):
    """The block's on-commit callbacks are dropped with it; an earlier block, never released, stays written."""
    ran = []
    with django_capture_on_commit_callbacks(execute=True), hosting():
        write("claim")
        with durable():
            write("w1")
            transaction.on_commit(lambda: ran.append("w1"))
        with pytest.raises(Conflict), durable():
            write("w2")
            transaction.on_commit(lambda: ran.append("w2"))
            raise Conflict("taken")
        assert keys() == ["claim", "w1"]
        with durable():
            write("w3")
            with pytest.raises(Conflict), transaction.atomic():  # a nested block's own savepoint
                write("w4")
                raise Conflict("taken")
    assert keys() == ["claim", "w1", "w3"]
    assert ran == ["w1"]


def test_a_failed_statement_in_a_block_rolls_back_to_its_savepoint_and_the_host_goes_on():
    """A unique violation aborts the transaction on PostgreSQL; the block's rollback to its own savepoint (with the
    block before it, never released, still open beneath) lets the host's transaction go on."""
    with hosting():
        write("claim")
        with durable():
            write("w1")
        with pytest.raises(IntegrityError), durable():
            write("claim")
        write("w2")
    assert keys() == ["claim", "w1", "w2"]


def test_an_error_after_the_blocks_rolls_back_everything_they_wrote():
    with pytest.raises(RuntimeError), hosting():
        write("claim")
        with durable():
            write("w1")
        with durable():
            write("w2")
        raise RuntimeError("crash before commit")
    assert keys() == []
