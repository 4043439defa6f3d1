"""The seed's WebSocket flow end to end: Bearer handshake, `tools/call` with id "req_123", the seed's answers."""

import pytest

from reminders.models import Event, Message

from .ws_client import exchange

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


def test_bad_key_gets_the_seed_401_and_the_socket_closes():
    (answer,), closed = exchange("mcp_wrong", [SEED_MESSAGE])
    assert answer == {"jsonrpc": "2.0", "id": "req_123", "error": {"code": 401, "message": "Invalid API key"}}
    assert closed["type"] == "websocket.close"
    assert not Event.objects.exists()


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
