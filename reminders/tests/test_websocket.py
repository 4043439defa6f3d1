"""The seed's WebSocket flow end to end: Bearer handshake, `tools/call` with id "req_123", the seed's answers."""

import json

import pytest
from asgiref.sync import async_to_sync

from reminders.models import Event, Message

from .ws_client import exchange, handshake

pytestmark = pytest.mark.django_db(transaction=True)

SEED_MESSAGE = {
    "jsonrpc": "2.0",
    "id": "req_123",
    "method": "tools/call",
    "params": {
        "name": "calendar.create",
        "arguments": {"title": "朝ラン", "start": "2025-09-19T07:00:00+09:00", "duration_min": 30},
    },
}


def test_seed_tool_execution_message_gets_the_seed_response(api_key, user):
    _key, raw = api_key
    (answer,), _ = exchange(raw, [SEED_MESSAGE])
    assert answer["jsonrpc"] == "2.0" and answer["id"] == "req_123"
    assert answer["result"]["status"] == "ok" and answer["result"]["id"].startswith("evt_")
    event = Event.objects.get(public_id=answer["result"]["id"])
    assert event.owner == user and event.start_local.isoformat() == "2025-09-19T07:00:00+09:00"


def test_the_seed_example_in_iso_basic_format(api_key):
    _key, raw = api_key
    arguments = {"title": "朝ラン", "start": "20250919T070000+0900", "duration_min": 30}
    (answer,), _ = exchange(raw, [{**SEED_MESSAGE, "params": {"name": "calendar.create", "arguments": arguments}}])
    event = Event.objects.get(public_id=answer["result"]["id"])
    assert event.start_local.isoformat() == "2025-09-19T07:00:00+09:00"


def test_in_band_error_over_the_socket(api_key):
    _key, raw = api_key
    bad = {
        **SEED_MESSAGE,
        "params": {"name": "reminder.create", "arguments": {"time": "2020-01-01T00:00:00Z", "note": "x"}},
    }
    (answer,), _ = exchange(raw, [bad])
    assert answer["id"] == "req_123"
    assert answer["result"]["status"] == "error" and "in the past" in answer["result"]["error"]


@pytest.mark.parametrize("raw_key", ["mcp_wrong", None])
def test_a_bad_or_missing_key_is_refused_at_the_handshake_with_the_seed_401(raw_key):
    """Refused before the socket opens, so no frame of an unauthenticated client is ever read or buffered."""
    start, body = handshake(raw_key)
    assert start["type"] == "websocket.http.response.start" and start["status"] == 401
    assert (b"www-authenticate", b'Bearer realm="mcpsite"') in start["headers"]
    error = json.loads(body["body"])["error"]
    assert error["code"] == 401
    if raw_key is not None:
        assert error == {"code": 401, "message": "Invalid API key"}


def test_a_refused_handshake_without_the_denial_extension_is_closed_unopened():
    """A server without the handshake-response extension: the handshake is closed before it is accepted (403)."""
    from asgiref.testing import ApplicationCommunicator

    from mcpsite.routing import application

    async def run():
        scope = {"type": "websocket", "path": "/ws", "raw_path": b"/ws", "query_string": b"",
                 "headers": [(b"authorization", b"Bearer mcp_wrong")], "subprotocols": []}  # fmt: skip
        communicator = ApplicationCommunicator(application, scope)
        await communicator.send_input({"type": "websocket.connect"})
        return await communicator.receive_output(timeout=10)

    assert async_to_sync(run)()["type"] == "websocket.close"


def _send(to):
    return {**SEED_MESSAGE, "params": {"name": "message.send", "arguments": {"to": to, "text": "今から向かいます"}}}


def test_message_send_over_the_socket_reaches_only_a_whole_name(api_key, contacts):
    """A fragment of a name is refused with the candidates; the whole name, spaced any way, is the recipient."""
    _key, raw = api_key
    (fragment, spaced), _ = exchange(raw, [_send("子"), _send("山田　花子")])
    assert fragment["result"]["status"] == "error" and set(fragment["result"]) == {"status", "error"}
    assert f"山田花子 ({contacts['hanako'].public_id})" in fragment["result"]["error"]
    assert spaced["result"]["status"] == "ok"
    assert Message.objects.get().contact == contacts["hanako"]
