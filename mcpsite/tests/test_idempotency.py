"""The idempotency stage (mcpsite/mcp/idempotency.py): a keyed retry of a writing tool replays the first outcome and
writes once; other arguments under the same key are refused; no key changes nothing (docs/idempotency.md)."""

from __future__ import annotations

import dataclasses
import datetime
import json

import pytest
from django.db import connection
from django.utils import timezone

from cinema.tests.conftest import make_movie, make_schedule, make_theater
from ledger import seeding
from ledger.models import JournalEntry
from mcpsite.core.errors import ApplicationError, IdempotencyConflict, InvalidParams
from mcpsite.mcp import dispatch, idempotency
from mcpsite.mcp.idempotency import keyed
from mcpsite.mcp.wire import as_jsonrpc, jsonrpc_code
from mcpsite.models import IdempotencyRecord
from mcpsite.tests.concurrency import run_together

ENTRY = {
    "date": "2024-01-15",
    "description": "商品仕入",
    "lines": [{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 10000}],
}


@pytest.fixture
def chart(db):
    seeding.chart_of_accounts_ensure()


@pytest.fixture
def show(db):
    """A show tomorrow at 18:00 in a 10×10 theater."""
    theater = make_theater("シアターI", public_id="t19")
    movie = make_movie("スタームービー", public_id="m019")
    return make_schedule(movie, theater, timezone.localdate() + datetime.timedelta(days=1), "18:00")


def entry(**changes):
    return {**ENTRY, **changes}


def call(ctx, name, arguments, key=None):
    """The dispatcher's answer to one call with `key` (as `_meta.idempotencyKey` would bring it): the result and
    whether it was a replay."""
    ctx = keyed(dataclasses.replace(ctx, request_id=dispatch.new_request_id()), params={"idempotencyKey": key})
    result = dispatch.call_tool(ctx, name, arguments)
    return result, idempotency.replayed(ctx)


def error_of(ctx, name, arguments, key=None) -> tuple[ApplicationError, bool]:
    ctx = keyed(ctx, params={"idempotencyKey": key})
    with pytest.raises(ApplicationError) as info:
        dispatch.call_tool(ctx, name, arguments)
    return info.value, idempotency.replayed(ctx)


def test_a_retry_returns_the_first_result_and_writes_once(tool_context, chart):
    first, first_replayed = call(tool_context, "create_journal_entry", entry(), key="k-1")
    again, again_replayed = call(tool_context, "create_journal_entry", entry(), key="k-1")
    assert JournalEntry.objects.count() == 1
    assert json.dumps(again.data, ensure_ascii=False) == json.dumps(first.data, ensure_ascii=False)
    assert (first_replayed, again_replayed) == (False, True)


def test_the_arguments_compare_as_json_values_not_text(tool_context, chart):
    call(tool_context, "create_journal_entry", entry(), key="k-order")
    reordered = {"lines": ENTRY["lines"], "description": ENTRY["description"], "date": ENTRY["date"]}
    _result, replayed = call(tool_context, "create_journal_entry", reordered, key="k-order")
    assert replayed and JournalEntry.objects.count() == 1


def test_another_key_writes_again(tool_context, chart):
    call(tool_context, "create_journal_entry", entry(), key="k-a")
    call(tool_context, "create_journal_entry", entry(), key="k-b")
    assert JournalEntry.objects.count() == 2


def test_different_arguments_under_one_key_are_refused_with_their_own_code(tool_context, chart):
    call(tool_context, "create_journal_entry", entry(), key="k-2")
    error, _replayed = error_of(tool_context, "create_journal_entry", entry(description="別の仕訳"), key="k-2")
    assert isinstance(error, IdempotencyConflict)
    assert as_jsonrpc(error) == {
        "code": 422,
        "message": "Idempotency key reused with different arguments",
        "data": {
            "type": "idempotency_key_conflict",
            "idempotencyKey": "k-2",
            "message": "Idempotency key 'k-2' was used for create_journal_entry with other arguments",
        },
    }
    assert JournalEntry.objects.count() == 1


def test_a_domain_error_is_stored_and_replayed(tool_context, chart):
    unbalanced = entry(
        lines=[{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 9000}]
    )
    first, first_replayed = error_of(tool_context, "create_journal_entry", unbalanced, key="k-3")
    again, again_replayed = error_of(tool_context, "create_journal_entry", unbalanced, key="k-3")
    assert as_jsonrpc(again) == as_jsonrpc(first) and jsonrpc_code(first) == 409
    assert (first_replayed, again_replayed) == (False, True)
    record = IdempotencyRecord.objects.get()
    assert record.outcome == IdempotencyRecord.Outcome.ERROR


def test_the_key_is_scoped_to_the_credential(tool_context, make_api_key, chart):
    other_key, _raw = make_api_key()
    other = dispatch.call_context(transport="test", api_key=other_key)
    call(tool_context, "create_journal_entry", entry(), key="shared")
    _result, replayed = call(other, "create_journal_entry", entry(), key="shared")
    assert not replayed and JournalEntry.objects.count() == 2


def test_the_key_is_scoped_to_the_tool(tool_context, chart):
    call(tool_context, "create_journal_entry", entry(), key="same")
    result, replayed = call(
        tool_context, "reminder.create", {"time": "2099-01-01T09:00:00+09:00", "note": "n"}, key="same"
    )
    assert result.data["status"] == "ok" and not replayed


def test_no_key_changes_nothing(tool_context, chart):
    plain = dispatch.call_tool(tool_context, "create_journal_entry", entry()).data
    again = dispatch.call_tool(tool_context, "create_journal_entry", entry()).data
    assert JournalEntry.objects.count() == 2 and set(plain) == set(again)
    assert not IdempotencyRecord.objects.exists()


def test_a_key_on_a_reading_tool_is_ignored(tool_context, chart):
    ctx = keyed(tool_context, params={"idempotencyKey": "read"})
    dispatch.call_tool(ctx, "list_accounts", {})
    assert not IdempotencyRecord.objects.exists() and not idempotency.replayed(ctx)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"idempotencyKey": ""}, "idempotencyKey must be 1 to 255 printable ASCII characters"),
        ({"idempotencyKey": "x" * 256}, "idempotencyKey must be 1 to 255 printable ASCII characters"),
        ({"idempotencyKey": "キー"}, "idempotencyKey must be 1 to 255 printable ASCII characters"),
        ({"idempotencyKey": 5}, "idempotencyKey must be a string"),
        (
            {"idempotencyKey": "a", "_meta": {"idempotencyKey": "b"}},
            "The Idempotency-Key header and idempotencyKey differ; send one key",
        ),
    ],
)
def test_a_malformed_key_is_refused_before_anything_runs(tool_context, chart, keys, message):
    ctx = keyed(tool_context, params=keys)
    with pytest.raises(InvalidParams) as info:
        dispatch.call_tool(ctx, "create_journal_entry", entry())
    assert info.value.detail == message
    assert not JournalEntry.objects.exists()


def test_a_quoted_header_names_the_same_key(tool_context, chart):
    call(tool_context, "create_journal_entry", entry(), key="k-q")
    ctx = keyed(tool_context, header='"k-q"')
    dispatch.call_tool(ctx, "create_journal_entry", entry())
    assert idempotency.replayed(ctx) and JournalEntry.objects.count() == 1


def test_no_secret_is_stored(tool_context, show, monkeypatch):
    arguments = {
        "schedule_id": show.public_id,
        "seats": ["A1"],
        "reservation_password": "pass-4821",
        "customer_name": "山田",
    }
    result, _ = call(tool_context, "reserve_seats", arguments, key="k-secret")
    again, replayed = call(tool_context, "reserve_seats", arguments, key="k-secret")
    record = IdempotencyRecord.objects.get()
    assert "pass-4821" not in record.result and "pass-4821" not in record.arguments_digest
    assert "pass-4821" not in json.dumps(again.data) and replayed and again.data == result.data


def test_an_expired_key_is_new_again(tool_context, chart, monkeypatch, settings):
    start = datetime.datetime(2026, 11, 1, 12, 0, tzinfo=datetime.UTC)
    monkeypatch.setattr(idempotency, "now", lambda: start)
    call(tool_context, "create_journal_entry", entry(), key="k-exp")
    monkeypatch.setattr(
        idempotency, "now", lambda: start + datetime.timedelta(seconds=settings.MCP_IDEMPOTENCY_RETENTION - 1)
    )
    _result, replayed = call(tool_context, "create_journal_entry", entry(), key="k-exp")
    assert replayed and JournalEntry.objects.count() == 1
    monkeypatch.setattr(
        idempotency, "now", lambda: start + datetime.timedelta(seconds=settings.MCP_IDEMPOTENCY_RETENTION + 1)
    )
    _result, replayed = call(tool_context, "create_journal_entry", entry(), key="k-exp")
    assert not replayed and JournalEntry.objects.count() == 2
    assert IdempotencyRecord.objects.count() == 1


def test_every_writing_tool_declares_it():
    from mcpsite.mcp import registry

    writing = sorted(spec.name for spec in registry.tools() if spec.writes)
    assert writing == sorted(
        [
            "reserve_seats",
            "cancel_reservation",
            "create_journal_entry",
            "calendar.create",
            "message.send",
            "reminder.create",
        ]
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
class TestConcurrentDuplicates:
    """Ten calls with one key released together: one writes, the others wait for its commit and replay it."""

    def duplicates(self, tool_context):
        def one(i):
            result, replayed = call(tool_context, "create_journal_entry", entry(), key="k-together")
            return result.data, replayed

        return run_together(one, 10)

    def test_ten_concurrent_duplicates_write_once(self, tool_context, chart):
        results, errors = self.duplicates(tool_context)
        assert errors == []
        assert JournalEntry.objects.count() == 1
        assert sorted(replayed for _data, replayed in results) == [False] + [True] * 9
        assert len({json.dumps(data) for data, _replayed in results}) == 1

    def test_control_without_the_stage_ten_write(self, tool_context, chart, monkeypatch):
        monkeypatch.setattr(dispatch, "STAGES", [s for s in dispatch.STAGES if s is not idempotency.idempotent])
        results, errors = self.duplicates(tool_context)
        assert errors == [] and len(results) == 10
        assert JournalEntry.objects.count() == 10


def test_the_claim_commits_with_the_write(tool_context, chart, monkeypatch):
    """A failure after the tool wrote (here: storing its outcome) rolls back the write and the claim together: the
    key stays free and nothing was written."""

    def broken(**kwargs):
        raise RuntimeError("crash before commit")

    monkeypatch.setattr(idempotency, "idempotency_settle", broken)
    with pytest.raises(ApplicationError):
        call(tool_context, "create_journal_entry", entry(), key="k-crash")
    assert not JournalEntry.objects.exists() and not IdempotencyRecord.objects.exists()
    monkeypatch.undo()
    _result, replayed = call(tool_context, "create_journal_entry", entry(), key="k-crash")
    assert not replayed and JournalEntry.objects.count() == 1
    assert connection.in_atomic_block  # the test's own transaction, untouched


def test_the_prune_command_deletes_records_past_the_retention_and_shows_progress(tool_context, chart, settings):
    from io import StringIO

    from django.core.management import call_command
    from django.utils import timezone

    old = timezone.now() - datetime.timedelta(seconds=settings.MCP_IDEMPOTENCY_RETENTION + 60)
    for i in range(3):
        IdempotencyRecord.objects.create(
            principal="p", tool="t", key=f"old-{i}", arguments_digest="d", outcome="ok", result="{}", created_at=old
        )
    call(tool_context, "create_journal_entry", entry(), key="fresh")
    out = StringIO()
    call_command("prune_idempotency_records", "--batch", "2", stdout=out)
    assert out.getvalue().splitlines() == [  # staff output, in LANGUAGE_CODE (ja)
        "… これまでに 2 件削除",
        "… これまでに 3 件削除",
        "保持期間を過ぎた冪等キーの記録を 3 件削除しました。",
    ]
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["fresh"]


@pytest.mark.postgres
def test_the_settled_outcome_commits_with_the_wal_flushed(tool_context, chart):
    """A rate take inside the write's transaction turns the flush wait off for it (commit_without_flush_wait); the
    outcome's UPDATE turns it back on, so the write and its record are durable when the client hears of them."""
    from mcpsite.core.db import commit_without_flush_wait, hosting, update_with_flush_wait

    call(tool_context, "create_journal_entry", entry(), key="k-flush")
    record = IdempotencyRecord.objects.get()
    with hosting(), connection.cursor() as cursor:
        commit_without_flush_wait()
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "off"
        update_with_flush_wait(IdempotencyRecord, record.pk, {"outcome": "ok"})
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_repeat_waiting_past_the_lock_timeout_is_told_to_retry(tool_context, chart):
    """The first call's transaction still holds the claim (held open in another thread): the repeat waits for it at
    most the lock timeout, then gets the in-progress error with Retry-After, and writes nothing."""
    from mcpsite.core.errors import IdempotencyInProgress
    from mcpsite.idempotency import principal_digest
    from mcpsite.mcp import requeststate
    from mcpsite.tests.concurrency import held_in_another_transaction

    claim = {
        "principal": principal_digest(requeststate.principal_of(tool_context)),
        "tool": "create_journal_entry",
        "key": "k-busy",
        "arguments_digest": "d",
        "outcome": "pending",
        "result": "",
        "created_at": timezone.now(),
    }
    with held_in_another_transaction(lambda: IdempotencyRecord.objects.create(**claim)):
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '200ms'")
        try:
            error, _replayed = error_of(tool_context, "create_journal_entry", entry(), key="k-busy")
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
    assert isinstance(error, IdempotencyInProgress) and error.retry_after == 1
    assert as_jsonrpc(error)["code"] == 409 and error.data["type"] == "idempotency_key_in_progress"
    assert not JournalEntry.objects.exists()
