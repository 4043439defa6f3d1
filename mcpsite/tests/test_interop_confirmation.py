"""message.send's confirmation on MCP 2026-07-28 over Streamable HTTP, with the official Python client in its
default mode (`mode="auto"` negotiates 2026-07-28 against this server): in process through the site's ASGI app
(bearer keys, the JSON-RPC wire), and across two uvicorn processes behind a proxy that alternates every request,
so the question and its answer never reach the same process (PostgreSQL in the PostgreSQL pass)."""

from __future__ import annotations

import contextlib
import json

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcpsite.guard import RequestGuard
from mcpsite.mcp import threads
from reminders.models import Contact, Message

from .live import AlternatingProxy, live_site
from .test_serving import running_site

ACCEPT = types.ElicitResult(action="accept", content={"confirm": True})
DECLINE = types.ElicitResult(action="decline")
STATE_REFUSED = "Invalid or expired requestState"


@contextlib.asynccontextmanager
async def modern_client(url: str, raw_key: str, answer: types.ElicitResult | None = None, *, app=None):
    """(the official client on `url` with `raw_key`, declaring elicitation; the questions its user was asked).
    `answer` is what the user answers (None: the test drives the rounds itself); `app`: an ASGI app served in
    process instead of over the network."""
    asked: list[str] = []

    async def callback(context, params):
        asked.append(params.message)
        if answer is None:
            raise AssertionError("this test drives the rounds itself")
        return answer

    transport = httpx2.ASGITransport(app=RequestGuard(app)) if app is not None else None
    headers = {"Authorization": f"Bearer {raw_key}"}
    async with httpx2.AsyncClient(transport=transport, headers=headers, timeout=30) as http:
        transport_streams = streamable_http_client(url, http_client=http)
        async with Client(transport_streams, elicitation_callback=callback, cache=None) as client:
            assert client.session.protocol_version == "2026-07-28"  # what mode="auto" negotiates here
            yield client, asked


async def retry(client, arguments: dict, state: str, answer=ACCEPT):
    """The retry of a confirmation round, or the MCPError refusing it."""
    try:
        return await client.session.call_tool(
            "message.send", arguments, input_responses={"confirm": answer}, request_state=state
        )
    except MCPError as exc:
        return exc


def refused(result) -> bool:
    return isinstance(result, MCPError) and result.error.code == -32602 and result.error.message == STATE_REFUSED


def tampered(state: str) -> str:
    return state[:-6] + ("A" if state[-6] != "A" else "B") + state[-5:]


# --- in process, through the site's ASGI app -----------------------------------------------------------------


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def two_keys_of_one_user(make_api_key, user):
    Contact.objects.create(owner=user, name="山田花子", email="hanako@example.com")
    return make_api_key()[1], make_api_key(name="other")[1]


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_over_http_the_question_binds_to_the_key_that_was_asked(two_keys_of_one_user):
    """Through the real transport (the bearer key in the ASGI scope is the principal the state is bound to):
    a decline sends nothing, an accept sends once, and the state is refused to another key of the same user."""
    raw, other_raw = two_keys_of_one_user
    url = "http://127.0.0.1:8000/mcp"
    async with running_site() as app:
        async with modern_client(url, raw, DECLINE, app=app) as (client, asked):
            declined = await client.call_tool("message.send", {"to": "山田花子", "text": "declined"})
            assert declined.is_error and len(asked) == 1
        async with modern_client(url, raw, ACCEPT, app=app) as (client, asked):
            accepted = await client.call_tool("message.send", {"to": "山田花子", "text": "accepted"})
            assert accepted.structured_content["status"] == "ok" and len(asked) == 1
        async with modern_client(url, raw, app=app) as (client, asked):
            arguments = {"to": "山田花子", "text": "other key"}
            first = await client.session.call_tool("message.send", arguments, allow_input_required=True)
        async with modern_client(url, other_raw, app=app) as (client, asked):
            assert refused(await retry(client, arguments, first.request_state))
    texts = await threads.in_worker_thread(lambda: list(Message.objects.values_list("text", flat=True)))()
    assert texts == ["accepted"]


# --- two processes behind an alternating proxy ---------------------------------------------------------------

SETUP = """
from django.contrib.auth import get_user_model
from reminders.models import Contact
owner = get_user_model().objects.get(username="interop")
Contact.objects.create(owner=owner, name="山田花子", email="hanako@example.com")
"""
SENT = """
import json
from reminders.models import Message
print(json.dumps(list(Message.objects.order_by("text").values_list("text", "public_id"))))
"""


@pytest.mark.slow
def test_two_processes_behind_an_alternating_proxy_confirm_once(live_template, tmp_path):
    """Every request goes to the other process: decline sends nothing, accept sends once, the same accepted retry
    replayed (a lost reply) returns the same message, also when two repeats reach both processes at once (on a
    SQLite file in the SQLite pass), and a forged state is refused."""
    with live_site(live_template, tmp_path) as site:
        site.shell(SETUP)
        backends = [site.start_server(), site.start_server()]
        proxy = AlternatingProxy(backends)
        with proxy as proxy_url:
            url = f"{proxy_url}/mcp"

            async def scenario():
                async with modern_client(url, site.key, DECLINE) as (client, _asked):
                    declined = await client.call_tool("message.send", {"to": "山田花子", "text": "decline"})
                async with modern_client(url, site.key, ACCEPT) as (client, asked):
                    accepted = await client.call_tool("message.send", {"to": "山田花子", "text": "accept"})
                async with modern_client(url, site.key) as (client, _asked):
                    arguments = {"to": "山田花子", "text": "replay"}
                    first = await client.session.call_tool("message.send", arguments, allow_input_required=True)
                    replies = [await retry(client, arguments, first.request_state) for _ in range(3)]
                    forged = await retry(client, arguments, tampered(first.request_state))
                    # Two repeats at once: the proxy sends one to each process.
                    arguments = {"to": "山田花子", "text": "together"}
                    second = await client.session.call_tool("message.send", arguments, allow_input_required=True)
                    together: list = []

                    async def repeat():
                        together.append(await retry(client, arguments, second.request_state))

                    async with anyio.create_task_group() as tg:
                        tg.start_soon(repeat)
                        tg.start_soon(repeat)
                return declined, accepted, asked, replies, forged, together

            declined, accepted, asked, replies, forged, together = anyio.run(scenario)
        sent = site.shell(SENT)
    assert min(proxy.sent) >= 4  # both processes answered rounds
    assert declined.is_error and "declined" in declined.structured_content["error"]
    assert accepted.structured_content["status"] == "ok" and len(asked) == 1 and "hanako@example.com" in asked[0]
    assert len({r.structured_content["id"] for r in replies}) == 1
    assert refused(forged)
    assert len({r.structured_content["id"] for r in together}) == 1
    assert json.loads(sent) == [
        ["accept", accepted.structured_content["id"]],
        ["replay", replies[0].structured_content["id"]],
        ["together", together[0].structured_content["id"]],
    ]
