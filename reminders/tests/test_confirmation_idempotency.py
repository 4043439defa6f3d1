"""message.send's confirmation rounds with an idempotency key (docs/idempotency.md, "Confirmation rounds"): the key
binds the initial request, which asks and stores nothing; the answer's own nonce makes the accepted send happen once,
however often it is repeated; a client that cannot confirm sends on the first call, and its key makes a retry send
once. Each round is its own server and client (the official Python client, protocol 2026-07-28)."""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcpsite.mcp.idempotency import REPLAYED_META
from mcpsite.mcp.server import build_server
from mcpsite.models import IdempotencyRecord
from reminders.models import Message

from .test_confirmation_roundtrip import ACCEPT, SEND, Caller, _no_question

pytestmark = pytest.mark.django_db(transaction=True)

KEY = {"idempotencyKey": "send-once-1"}


@pytest.fixture
def caller(api_key):
    return Caller(api_key[0])


def call(caller: Caller, *, answer=None, state=None, elicitation=True):
    """message.send with KEY in the request's `_meta`, as the official client sends it."""

    async def connected():
        server = build_server(caller.context_for)
        callback = _no_question if elicitation else None
        async with Client(server, mode="auto", cache=None, elicitation_callback=callback) as client:
            responses = {"confirm": answer} if answer is not None else None
            return await client.session.call_tool(
                "message.send", SEND, input_responses=responses, request_state=state, meta=KEY,
                allow_input_required=True,
            )  # fmt: skip

    return anyio.run(connected)


def test_the_key_binds_the_initial_request_and_the_accepted_nonce_sends_once(caller, contacts):
    first = call(caller)
    assert isinstance(first, types.InputRequiredResult)
    assert not IdempotencyRecord.objects.exists()  # a question is no outcome: the key stays free
    asked_again = call(caller)  # a retry of the initial request asks again, and writes nothing
    assert isinstance(asked_again, types.InputRequiredResult) and not Message.objects.exists()

    sent = call(caller, answer=ACCEPT, state=first.request_state)
    repeated = call(caller, answer=ACCEPT, state=first.request_state)  # the answer's reply was lost: sent again
    assert sent.structured_content["status"] == "ok"
    assert repeated.structured_content == sent.structured_content
    assert Message.objects.count() == 1


def test_a_client_that_cannot_confirm_sends_once_with_its_key(caller, contacts):
    first = call(caller, elicitation=False)
    again = call(caller, elicitation=False)
    assert first.structured_content["status"] == "ok"
    assert again.structured_content == first.structured_content
    assert (again.meta or {}).get(REPLAYED_META) is True
    assert Message.objects.count() == 1
