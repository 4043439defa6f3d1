"""Every door takes an idempotency key and marks a replay: the `Idempotency-Key` header on `/mcp`, `/rpc` and REST;
SEP-3182's `idempotencyKey` on tools/call; `_meta.idempotencyKey` on stdio and the WebSocket
(docs/idempotency.md). Each test sends the same write twice and finds one journal entry and a marked replay."""

from __future__ import annotations

import io
import json

import anyio
import pytest

from ledger import seeding
from ledger.models import JournalEntry
from mcpsite.mcp.idempotency import REPLAYED_META
from mcpsite.mcp.stdio import serve_stdio
from reminders.tests.ws_client import exchange as ws_exchange

from .test_serving import request as mcp_request
from .test_serving import running_site
from .transports import META, MODERN, message

pytestmark = pytest.mark.django_db(transaction=True)

ENTRY = {
    "date": "2024-01-15",
    "description": "商品仕入",
    "lines": [{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 10000}],
}
CALL = {"name": "create_journal_entry", "arguments": ENTRY}


@pytest.fixture(autouse=True)
def chart(transactional_db):
    seeding.chart_of_accounts_ensure()


def mcp_twice(raw_key: str, params: dict, headers: list[tuple[bytes, bytes]] = ()) -> list[tuple[int, dict, dict]]:
    """The same 2026-07-28 tools/call POSTed to /mcp twice: (status, headers, JSON body) of each."""
    body = message("tools/call", {**params, "_meta": {**META, **params.get("_meta", {})}})
    routing = [(b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", b"tools/call"),
               (b"mcp-name", params["name"].encode()), *headers]  # fmt: skip

    async def run():
        async with running_site() as app:
            return [await mcp_request(app, raw_key, body, headers=routing) for _ in range(2)]

    return [(status, dict(sent), json.loads(data)) for status, sent, data in anyio.run(run)]


def without_mark(result: dict) -> dict:
    meta = {k: v for k, v in result.get("_meta", {}).items() if k != REPLAYED_META}
    return {k: v for k, v in result.items() if k != "_meta"} | ({"_meta": meta} if meta else {})


def test_mcp_idempotency_key_header(api_key):
    _key, raw = api_key
    first, again = mcp_twice(raw, CALL, [(b"idempotency-key", b"mcp-header-1")])
    assert JournalEntry.objects.count() == 1
    assert b"idempotent-replayed" not in first[1] and again[1][b"idempotent-replayed"] == b"true"
    assert again[2]["result"]["_meta"][REPLAYED_META] is True
    assert REPLAYED_META not in first[2]["result"].get("_meta", {})
    assert without_mark(again[2]["result"]) == first[2]["result"]


def test_mcp_sep_3182_idempotency_key_param(api_key):
    _key, raw = api_key
    first, again = mcp_twice(raw, {**CALL, "idempotencyKey": "mcp-param-1"})
    assert JournalEntry.objects.count() == 1
    assert again[2]["result"]["_meta"][REPLAYED_META] is True and again[1][b"idempotent-replayed"] == b"true"
    assert without_mark(again[2]["result"]) == first[2]["result"]


def test_mcp_other_arguments_are_an_error_result_with_the_conflict_code(api_key):
    _key, raw = api_key

    async def run():
        async with running_site() as app:
            answers = []
            for description in ("一つ目", "二つ目"):
                params = {"name": "create_journal_entry", "arguments": {**ENTRY, "description": description},
                          "idempotencyKey": "mcp-conflict", "_meta": META}  # fmt: skip
                headers = [(b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", b"tools/call"),
                           (b"mcp-name", b"create_journal_entry")]  # fmt: skip
                answers.append(await mcp_request(app, raw, message("tools/call", params), headers=headers))
            return answers

    _first, (_status, _headers, body) = anyio.run(run)
    result = json.loads(body)["result"]
    assert result["isError"] is True and result["structuredContent"]["code"] == 422
    assert result["structuredContent"]["data"]["type"] == "idempotency_key_conflict"
    assert JournalEntry.objects.count() == 1


def test_mcp_server_discover_advertises_the_capability(api_key):
    _key, raw = api_key

    async def run():
        async with running_site() as app:
            headers = [(b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", b"server/discover")]
            return await mcp_request(app, raw, message("server/discover", {"_meta": META}), headers=headers)

    _status, _headers, body = anyio.run(run)
    assert json.loads(body)["result"]["capabilities"]["tools"]["idempotency"] == {}


def test_rpc_idempotency_key_header_replays_the_same_bytes(client, api_key):
    _key, raw = api_key
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "create_journal_entry", "params": ENTRY})
    headers = {"Authorization": f"Bearer {raw}", "Idempotency-Key": "rpc-1"}
    first = client.post("/rpc", data=body, content_type="application/json", headers=headers)
    again = client.post("/rpc", data=body, content_type="application/json", headers=headers)
    assert JournalEntry.objects.count() == 1
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true" and not first.has_header("Idempotent-Replayed")


def test_rpc_tools_call_idempotency_key_param(rpc):
    params = {**CALL, "idempotencyKey": "rpc-param"}
    first = rpc.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    again = rpc.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    assert JournalEntry.objects.count() == 1
    assert again["result"] == {**first["result"], "_meta": {REPLAYED_META: True}}


def test_rest_idempotency_key_header(client, api_key):
    _key, raw = api_key
    headers = {"Authorization": f"Bearer {raw}", "Idempotency-Key": "rest-1"}

    def post(body):
        return client.post("/mcp/tools/call", data=json.dumps(body), content_type="application/json", headers=headers)

    first, again = post(CALL), post(CALL)
    assert JournalEntry.objects.count() == 1
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    conflict = post({**CALL, "arguments": {**ENTRY, "description": "別"}})
    assert conflict.status_code == 422 and conflict.json()["error"]["data"]["type"] == "idempotency_key_conflict"


def test_stdio_meta_idempotency_key():
    params = {**CALL, "_meta": {"idempotencyKey": "stdio-1"}}
    line = json.dumps(message("tools/call", params)) + "\n"
    answers = []
    for _session in range(2):  # the client starts the server again and retries
        output = io.StringIO()
        serve_stdio(groups=None, stdin=io.StringIO(line), stdout=output)
        answers.append(json.loads(output.getvalue()))
    first, again = answers
    assert JournalEntry.objects.count() == 1
    assert again["result"]["_meta"][REPLAYED_META] is True
    assert without_mark(again["result"]) == first["result"]


def test_websocket_meta_idempotency_key(api_key):
    _key, raw = api_key
    params = {**CALL, "_meta": {"idempotencyKey": "ws-1"}}
    answers, _closed = ws_exchange(raw, [{**message("tools/call", params), "id": i} for i in (1, 2)])
    first, again = answers
    assert JournalEntry.objects.count() == 1
    assert again["result"] == {**first["result"], "_meta": {REPLAYED_META: True}}


def test_no_key_on_any_door_answers_as_before(client, api_key, rpc):
    _key, raw = api_key
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "create_journal_entry", "params": ENTRY})
    answer = client.post("/rpc", data=body, content_type="application/json", headers={"Authorization": f"Bearer {raw}"})
    assert not answer.has_header("Idempotent-Replayed") and "_meta" not in answer.json()["result"]
    assert set(answer.json()["result"]) == {"success", "journalEntry"}


UNBALANCED = {
    **ENTRY,
    "lines": [{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 1}],
}


def test_websocket_replayed_error_is_marked_in_its_error_object(api_key):
    """A stored domain error comes back as the same error object with the `_meta` mark a replayed result has; the
    first answer carries none."""
    _key, raw = api_key
    params = {"name": "create_journal_entry", "arguments": UNBALANCED, "_meta": {"idempotencyKey": "ws-error"}}
    (first, again), _closed = ws_exchange(raw, [{**message("tools/call", params), "id": i} for i in (1, 2)])
    assert "_meta" not in first["error"] and "balance" in json.dumps(first["error"])
    assert again["error"] == {**first["error"], "_meta": {REPLAYED_META: True}}
    assert JournalEntry.objects.count() == 0


def test_rpc_tools_call_replayed_error_is_marked_as_on_the_websocket(client, api_key):
    """/rpc's tools/call answers as the WebSocket's does; its seed-style method keeps the seed's error object and is
    marked by the header alone."""
    _key, raw = api_key
    headers = {"Authorization": f"Bearer {raw}", "Idempotency-Key": "rpc-error"}

    def post(body):
        return client.post("/rpc", data=json.dumps(body), content_type="application/json", headers=headers)

    call = message("tools/call", {"name": "create_journal_entry", "arguments": UNBALANCED})
    first, again = post(call), post(call)
    assert again["Idempotent-Replayed"] == "true" and "_meta" not in first.json()["error"]
    assert again.json()["error"] == {**first.json()["error"], "_meta": {REPLAYED_META: True}}
    headers["Idempotency-Key"] = "rpc-error-seed"
    seed = {"jsonrpc": "2.0", "id": 1, "method": "create_journal_entry", "params": UNBALANCED}
    first, again = post(seed), post(seed)
    assert again["Idempotent-Replayed"] == "true" and again.content == first.content


def _rpc_batch(client, raw: str, batch: list[dict], key: str | None):
    headers = {"Authorization": f"Bearer {raw}", **({"Idempotency-Key": key} if key else {})}
    return client.post("/rpc", data=json.dumps(batch), content_type="application/json", headers=headers)


def _entry_call(i: int, description: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "create_journal_entry",
        "params": {**ENTRY, "description": description},
    }


def test_rpc_batch_with_one_header_key_and_two_writes_is_refused_whole(client, api_key):
    """A key names one request: a batch whose header would cover two writes runs none of them and says how to key
    each (without the refusal the second write ran into the first's key: one written, one refused as a conflict)."""
    _key, raw = api_key
    batch = [_entry_call(1, "一つ目"), _entry_call(2, "二つ目")]
    refused = _rpc_batch(client, raw, batch, "rpc-batch")
    error = refused.json()["error"]
    assert refused.json()["id"] is None and error["code"] == -32600
    assert "2 writing calls" in error["data"] and "idempotencyKey" in error["data"]
    assert JournalEntry.objects.count() == 0
    # Control: the same batch without the header writes both; with a key per call in tools/call it is replay-safe.
    assert [a["result"]["success"] for a in _rpc_batch(client, raw, batch, None).json()] == [True, True]
    keyed = [message("tools/call", {**CALL, "idempotencyKey": f"call-{i}"}) | {"id": i} for i in (1, 2)]
    first, again = (_rpc_batch(client, raw, keyed, None).json() for _ in range(2))
    assert JournalEntry.objects.count() == 4
    assert [a["result"]["_meta"] for a in again] == [{REPLAYED_META: True}] * 2 and "_meta" not in first[0]["result"]


def test_rpc_batch_with_one_header_key_and_one_write_keys_that_write(client, api_key):
    _key, raw = api_key
    batch = [_entry_call(1, "一つ"), {"jsonrpc": "2.0", "id": 2, "method": "list_accounts", "params": {}}]
    first, again = (_rpc_batch(client, raw, batch, "rpc-one-write") for _ in range(2))
    assert JournalEntry.objects.count() == 1
    assert again["Idempotent-Replayed"] == "true" and again.json()[0] == first.json()[0]
