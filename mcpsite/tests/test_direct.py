"""The plain calls `/mcp` answers itself (mcpsite/mcp/direct.py, decision 0016): each gets the answer the SDK's
transport gives it, on both revisions, and every other request still reaches the SDK."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from ledger import seeding
from ledger.models import JournalEntry
from mcpsite.mcp.direct import DirectCalls
from mcpsite.mcp.idempotency import REPLAYED_META
from mcpsite.mcp.registry import ToolSpec, register, unregister
from mcpsite.models import ToolCall

from .modern import envelope, routing_headers
from .test_idempotency_doors import ENTRY, without_mark
from .test_serving import ANSWER_CASES, _call, request, running_site

LEGACY = ((b"mcp-protocol-version", b"2025-11-25"),)
CLIENT = {"name": "c", "version": "1"}


def _modern(id_, name, arguments=None, *, capabilities=None, **params) -> tuple[dict, tuple]:
    message = envelope(id_, "tools/call", _call(id_, name, arguments, **params)["params"], capabilities)
    return message, tuple(routing_headers(message))


# 2025-11-25 calls beside test_serving's ANSWER_CASES (whose plain ones are direct), and 2026-07-28 calls: results,
# in-band and protocol errors, a tool outside the key's scopes, content blocks, a client's info, an idempotency key;
# a progress token, declared capabilities and a wrong routing header, which the SDK answers.
CASES = [
    *ANSWER_CASES,
    (_call(20, "get_movie_list", {}), LEGACY),
    (_call(21, "get_account_balance", {"account_code": "1000"}), LEGACY),
    (_call(22, "test_echo", {"text": "鍵"}, idempotencyKey="k-legacy"), LEGACY),
    _modern(30, "test_echo", {"text": "映画", "count": 2}),
    _modern(31, "test_echo", {"count": "two"}),
    _modern(32, "test_conflict", {}),
    _modern(33, "test_throttled", {}),
    _modern(34, "test_inband", {}),
    _modern(35, "test_content_blocks", {}),
    _modern(36, "test_values", {}),
    _modern(37, "get_account_balance", {"account_code": "1000"}),
    _modern(38, "test_echo", {"text": "鍵"}, idempotencyKey="k-modern"),
    _modern(
        39, "test_echo", {"text": "x"}, _meta={"io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}
    ),
    _modern(40, "test_echo", {"text": "x"}, _meta={"progressToken": "p"}),
    _modern(41, "test_echo", {"text": "x"}, capabilities={"elicitation": {}}),
    (_modern(42, "test_echo", {"text": "x"})[0], (*_modern(42, "test_echo")[1][:2], (b"mcp-name", b"other"))),
    # Structured content that is not an object: 2025-11-25's schema refuses it (a server bug, answered as an
    # internal error).
    (_call(43, "test_list_result", {}), LEGACY),
    _modern(44, "test_list_result", {}),
]


@pytest.fixture(autouse=True)
def list_result_tool():
    register(ToolSpec("test_list_result", "cinema", "A list", {"type": "object"}, lambda args, ctx: [1, 2]))
    yield
    unregister("test_list_result")


async def _answers(raw: str) -> list[tuple[int, bytes | None, object]]:
    """Each case's (status, content type, JSON or raw body), from a fresh site."""
    async with running_site() as app:
        answers = [await request(app, raw, message, headers=headers) for message, headers in CASES]
    return [(status, headers.get(b"content-type"), _json(body)) for status, headers, body in answers]


def _json(body: bytes) -> object:
    try:
        return json.loads(body)
    except ValueError:
        return body


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_plain_call_gets_the_sdks_answer(make_api_key, monkeypatch):
    (_key, raw) = await sync_to_async(make_api_key)(rate="1000/m", scopes=["cinema", "ledger:write"])
    answered: list[bool] = []
    answer = DirectCalls.answer

    async def watched(self, scope, send, *, modern):
        answered.append(await answer(self, scope, send, modern=modern))
        return answered[-1]

    monkeypatch.setattr(DirectCalls, "answer", watched)
    direct = await _answers(raw)
    assert answered.count(True) == 25, answered  # the control below shows what the SDK makes of each
    direct_calls = await sync_to_async(ToolCall.objects.count)()
    # 2025-11-25's schema wants an object there, 2026-07-28's takes any JSON value.
    assert direct[-2][2]["error"]["code"] == -32603 and direct[-1][2]["result"]["structuredContent"] == [1, 2]

    async def nothing_plain(self, scope, *, modern):
        return None

    monkeypatch.setattr(DirectCalls, "plain_call", nothing_plain)
    sdk = await _answers(raw)
    assert [case for case, (ours, theirs) in enumerate(zip(direct, sdk, strict=True)) if ours != theirs] == []
    # Audited alike: the second run adds as many rows as the first (idempotent replays included).
    assert await sync_to_async(ToolCall.objects.count)() == 2 * direct_calls


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_retried_plain_write_on_2025_11_25_is_done_once_and_marked(make_api_key):
    """The modern revision's keyed writes are test_idempotency_doors'; this is the handshake revision's."""
    await sync_to_async(seeding.chart_of_accounts_ensure)()
    (_key, raw) = await sync_to_async(make_api_key)(rate="1000/m")
    call = _call(50, "create_journal_entry", ENTRY, idempotencyKey="legacy-retry")
    async with running_site() as app:
        first, again = [await request(app, raw, call, headers=LEGACY) for _ in range(2)]
    assert await sync_to_async(JournalEntry.objects.count)() == 1
    assert b"idempotent-replayed" not in first[1] and again[1][b"idempotent-replayed"] == b"true"
    assert json.loads(again[2])["result"]["_meta"] == {REPLAYED_META: True}
    assert without_mark(json.loads(again[2])["result"]) == json.loads(first[2])["result"]
