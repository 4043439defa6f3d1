"""message.send on MCP 2026-07-28: the confirmation is a multi round-trip (input_required, then a retry carrying the
answer and the sealed requestState), through the official Python client in its default mode.

Each round below is its own server and client (as when a load balancer sends each request to another process);
they share only the database and the site's secret. The cross-process proof (two uvicorn processes behind an
alternating proxy) is mcpsite/tests/test_interop_confirmation.py.
"""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpsite.mcp import dispatch
from mcpsite.mcp.server import build_server
from mcpsite.models import ToolCall
from mcpsite.tests.concurrency import needs_concurrent_writers
from reminders.models import Message

pytestmark = pytest.mark.django_db(transaction=True)

SEND = {"to": "山田花子", "text": "今から向かいます"}
ACCEPT = types.ElicitResult(action="accept", content={"confirm": True})
STATE_REFUSED = "Invalid or expired requestState"


class Caller:
    """Who the server is told is calling (an API key); a test may change it between rounds."""

    def __init__(self, api_key) -> None:
        self.api_key = api_key

    def context_for(self, _sdk_ctx):
        return dispatch.call_context(transport="test", api_key=self.api_key), None


@pytest.fixture
def caller(api_key):
    return Caller(api_key[0])


async def _no_question(context, params):
    raise AssertionError("on 2026-07-28 the server asks through input_required, never with a request of its own")


def call(caller: Caller, args=SEND, *, answer=None, state=None, elicitation=True):
    """One tools/call of message.send from a fresh 2026-07-28 client to a fresh server: the result (complete or
    input_required), or the MCPError it was refused with. `elicitation`: declare the capability."""

    async def connected():
        server = build_server(caller.context_for)
        callback = _no_question if elicitation else None
        async with Client(server, mode="auto", cache=None, elicitation_callback=callback) as client:
            assert client.session.protocol_version == "2026-07-28"
            responses = {"confirm": answer} if answer is not None else None
            try:
                return await client.session.call_tool(
                    "message.send", args, input_responses=responses, request_state=state, allow_input_required=True
                )
            except MCPError as exc:
                return exc

    return anyio.run(connected)


def ask(caller: Caller, args=SEND) -> types.InputRequiredResult:
    first = call(caller, args)
    assert isinstance(first, types.InputRequiredResult), first
    return first


def question_of(result: types.InputRequiredResult) -> str:
    ((key, request),) = result.input_requests.items()
    assert key == "confirm" and request.method == "elicitation/create"
    assert request.params.requested_schema["properties"]["confirm"]["type"] == "boolean"
    return request.params.message


def refused(result) -> bool:
    return isinstance(result, MCPError) and result.error.code == -32602 and result.error.message == STATE_REFUSED


# --- the flow ----------------------------------------------------------------------------------------------


def test_the_first_call_asks_and_stores_nothing(caller, contacts):
    first = ask(caller)
    question = question_of(first)
    assert "山田花子" in question and "hanako@example.com" in question and "今から向かいます" in question
    assert "送信しますか" in question and "Send this message" in question
    assert first.request_state.startswith("v1.")  # sealed by the SDK's codec: opaque to the client
    assert "hanako" not in first.request_state
    assert not Message.objects.exists()


def test_accept_sends_once(caller, contacts):
    first = ask(caller)
    result = call(caller, answer=ACCEPT, state=first.request_state)
    assert result.structured_content["status"] == "ok" and not result.is_error
    message = Message.objects.get()
    assert (message.public_id, message.contact, message.text) == (
        result.structured_content["id"],
        contacts["hanako"],
        "今から向かいます",
    )


@pytest.mark.parametrize(
    ("answer", "verb"),
    [
        (types.ElicitResult(action="decline"), "declined"),
        (types.ElicitResult(action="cancel"), "cancelled"),
        (types.ElicitResult(action="accept", content={"confirm": False}), "declined"),
    ],
)
def test_decline_or_cancel_sends_nothing(caller, contacts, answer, verb):
    first = ask(caller)
    result = call(caller, answer=answer, state=first.request_state)
    assert result.structured_content == {
        "status": "error",
        "error": f"Not sent: the user {verb} sending this message to 山田花子",
    }
    assert result.is_error and not Message.objects.exists()


def test_the_official_client_drives_the_rounds_with_its_elicitation_callback(caller, contacts):
    """`Client.call_tool` with an elicitation callback, as an application uses it: asked once, sent once; a
    declining callback sends nothing (the issue's first finding: the message was sent and nobody was asked)."""

    def send_with(answer):
        asked = []

        async def callback(context, params):
            asked.append(params.message)
            return answer

        async def connected():
            server = build_server(caller.context_for)
            async with Client(server, mode="auto", cache=None, elicitation_callback=callback) as client:
                return await client.call_tool("message.send", SEND)

        return anyio.run(connected), asked

    declined, asked = send_with(types.ElicitResult(action="decline"))
    assert declined.is_error and len(asked) == 1 and not Message.objects.exists()
    accepted, asked = send_with(ACCEPT)
    assert accepted.structured_content["status"] == "ok" and len(asked) == 1
    assert Message.objects.get().public_id == accepted.structured_content["id"]


def test_a_client_without_elicitation_gets_the_seeds_behaviour(caller, contacts):
    """Decided: a client that cannot show a question is not asked (it could not answer), as on 2025-11-25 and on
    the seed's transports; docs/mcp-resources-prompts.md."""
    result = call(caller, elicitation=False)
    assert result.structured_content["status"] == "ok"
    assert Message.objects.get().public_id == result.structured_content["id"]


def test_bad_input_is_refused_before_anyone_is_asked(caller, contacts):
    result = call(caller, {"to": "誰でもない人", "text": "x"})
    assert isinstance(result, types.CallToolResult) and "No contact matches" in result.structured_content["error"]
    assert not Message.objects.exists()


def test_rounds_are_audited_the_question_as_input_required(caller, contacts, settings):
    settings.MCP_AUDIT_FLUSH_SECONDS = 0
    call(caller, answer=ACCEPT, state=ask(caller).request_state)
    outcomes = list(
        ToolCall.objects.filter(tool="message.send").order_by("created_at").values_list("outcome", flat=True)
    )
    assert outcomes == ["input_required", "ok"]


# --- sending once --------------------------------------------------------------------------------------------


def test_replaying_the_accepted_retry_returns_the_same_message(caller, contacts):
    """A client that retries after a lost reply presents the same state and answer again: the message it already
    sent comes back, nothing is sent twice."""
    state = ask(caller).request_state
    first = call(caller, answer=ACCEPT, state=state)
    again = call(caller, answer=ACCEPT, state=state)
    assert again.structured_content == first.structured_content
    assert Message.objects.count() == 1


@pytest.mark.parametrize("later", [types.ElicitResult(action="decline"), types.ElicitResult(action="cancel")])
def test_a_later_decline_of_the_accepted_question_tells_it_was_sent(caller, contacts, later):
    """The client presents the accepted state again with another answer: the message went out on the accept, so the
    answer names it instead of claiming it was not sent, and nothing more is sent."""
    state = ask(caller).request_state
    accepted = call(caller, answer=ACCEPT, state=state)
    again = call(caller, answer=later, state=state)
    assert again.structured_content == accepted.structured_content and not again.is_error
    assert Message.objects.count() == 1


def test_a_decline_does_not_name_another_questions_message(caller, contacts):
    """Control: a declined question whose nonce no message carries is still "Not sent", beside a message that another
    accepted question sent."""
    call(caller, answer=ACCEPT, state=ask(caller).request_state)
    declined = call(caller, answer=types.ElicitResult(action="decline"), state=ask(caller).request_state)
    assert declined.is_error and declined.structured_content["error"].startswith("Not sent")
    assert Message.objects.count() == 1


def test_two_concurrent_replays_send_once(caller, contacts):
    """The same accepted retry sent twice at once (two worker threads, as two processes would): one message, and
    both answers name it (the unique confirmation key decides; services tests race the two writes exactly)."""
    needs_concurrent_writers()
    state = ask(caller).request_state

    async def both():
        server = build_server(caller.context_for)
        async with Client(server, mode="auto", cache=None, elicitation_callback=_no_question) as client:
            results = []

            async def retry():
                results.append(
                    await client.session.call_tool(
                        "message.send", SEND, input_responses={"confirm": ACCEPT}, request_state=state
                    )
                )

            async with anyio.create_task_group() as tg:
                tg.start_soon(retry)
                tg.start_soon(retry)
            return results

    results = anyio.run(both)
    assert [r.structured_content["status"] for r in results] == ["ok", "ok"]
    assert results[0].structured_content == results[1].structured_content
    assert Message.objects.count() == 1


def test_a_new_call_with_the_same_arguments_asks_again_and_sends_again(caller, contacts):
    """Once per confirmation, not once per text: the user may well send the same words twice, each confirmed."""
    for _ in range(2):
        call(caller, answer=ACCEPT, state=ask(caller).request_state)
    assert Message.objects.count() == 2


def test_an_answer_to_another_text_asks_again(caller, contacts):
    """The contact's address changed between the question and the answer: the user agreed to a message to the old
    address, so the retry asks again (the state names the question's text), and sends nothing until answered."""
    state = ask(caller).request_state
    contacts["hanako"].email = "hanako@new.example.com"
    contacts["hanako"].save()
    again = call(caller, answer=ACCEPT, state=state)
    assert isinstance(again, types.InputRequiredResult) and "hanako@new.example.com" in question_of(again)
    assert not Message.objects.exists()
    sent = call(caller, answer=ACCEPT, state=again.request_state)
    message = Message.objects.get()
    assert (message.public_id, message.address) == (sent.structured_content["id"], "hanako@new.example.com")


def test_an_answer_without_the_state_is_no_answer(caller, contacts):
    """An `inputResponses` accept with no state (never asked, or the state dropped) is asked again, not obeyed."""
    result = call(caller, answer=ACCEPT)
    assert isinstance(result, types.InputRequiredResult) and not Message.objects.exists()


# --- states the server refuses -------------------------------------------------------------------------------


def tampered(state: str) -> str:
    return state[:-6] + ("A" if state[-6] != "A" else "B") + state[-5:]


def test_a_state_changed_in_transit_is_refused(caller, contacts):
    state = ask(caller).request_state
    assert refused(call(caller, answer=ACCEPT, state=tampered(state)))
    assert refused(call(caller, answer=ACCEPT, state="v1.not-a-state"))
    assert not Message.objects.exists()


def test_refused_states_are_audited(caller, contacts, settings):
    """A refused state never reaches the tool, but the call is audited, as any call is (every request, a refused one
    too, is counted against the key's rate at the door: mcpsite/tests/test_pipeline.py)."""
    settings.MCP_AUDIT_FLUSH_SECONDS = 0
    forged = tampered(ask(caller).request_state)
    first, second = (call(caller, answer=ACCEPT, state=forged) for _ in range(2))
    assert refused(first) and refused(second)
    rows = ToolCall.objects.filter(tool="message.send").order_by("created_at")
    assert [(r.outcome, r.error_code) for r in rows] == [
        ("input_required", ""),
        ("error", "-32602"),
        ("error", "-32602"),
    ]
    assert not Message.objects.exists()


def test_a_state_presented_by_another_credential_is_refused(caller, contacts, make_api_key):
    """Another key of the same user is another caller (the state is bound to the key, or the OAuth user and
    client); a key of another user even more so."""
    state = ask(caller).request_state
    caller.api_key = make_api_key(name="second key")[0]
    assert refused(call(caller, answer=ACCEPT, state=state))
    assert not Message.objects.exists()


def test_a_state_for_other_arguments_is_refused(caller, contacts):
    state = ask(caller).request_state
    assert refused(call(caller, {**SEND, "text": "別のメッセージ"}, answer=ACCEPT, state=state))
    assert refused(call(caller, {**SEND, "platform": "sms"}, answer=ACCEPT, state=state))
    assert not Message.objects.exists()


def test_an_expired_state_is_refused(caller, contacts, settings):
    settings.MCP_REQUEST_STATE_TTL = 0.5
    state = ask(caller).request_state
    anyio.run(anyio.sleep, 0.6)
    assert refused(call(caller, answer=ACCEPT, state=state))
    assert not Message.objects.exists()


def test_states_survive_a_secret_key_rotation(caller, contacts, settings):
    """The newest key seals, every key unseals: a state minted before `SECRET_KEY` was rotated (the old key moved
    to SECRET_KEY_FALLBACKS) is still accepted; once the old key is dropped it is not."""
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "old-" + "k" * 50, []
    state = ask(caller).request_state
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "new-" + "k" * 50, []
    assert refused(call(caller, answer=ACCEPT, state=state))
    settings.SECRET_KEY_FALLBACKS = ["old-" + "k" * 50]
    result = call(caller, answer=ACCEPT, state=state)
    assert result.structured_content["status"] == "ok" and Message.objects.count() == 1
