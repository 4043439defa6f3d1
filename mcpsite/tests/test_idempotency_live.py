"""Tested as agents fail (docs/idempotency.md): two uvicorn processes behind a proxy that alternates every request
(PostgreSQL in the PostgreSQL pass, a SQLite file in the SQLite pass). For each writing tool a client sends the
call, the proxy lets the backend finish and then drops the connection before the answer reaches the client, and the
client sends the same call with the same key again, which reaches the other process: one write, and the retry gets
the lost answer, marked as a replay."""

from __future__ import annotations

import json

import anyio
import httpx2
import pytest

from .live import AlternatingProxy, live_site

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}

SETUP = """
import datetime
from django.contrib.auth import get_user_model
from django.utils import timezone
from cinema import services
from cinema.models import Movie, Schedule, Theater
from ledger import seeding
from reminders.models import Contact

theater = services.theater_set_layout(
    theater=Theater.objects.create(name="T", rows=5, columns=5, public_id="t77"), rows=5, columns=5, blocked=set()
)
movie = Movie.objects.create(title="M", rating=4, public_id="m77", genre="SF", duration=120, description="",
                             release_date=datetime.date(2026, 1, 1))
Schedule.objects.create(movie=movie, theater=theater, date=timezone.localdate() + datetime.timedelta(days=1),
                        start_time=datetime.time(18, 0), public_id="s77")
booking = services.reservation_create(schedule_id="s77", seats=["E5"], password="secret-77")
seeding.chart_of_accounts_ensure()
owner = get_user_model().objects.get(username="interop")
owner.email = "interop@example.com"
owner.save()
Contact.objects.create(owner=owner, name="山田花子", email="hanako@example.com")
print(booking.reservation.public_id)
"""


def calls(reservation_id: str) -> list[tuple[str, dict, str, dict]]:
    """(tool, arguments, table, the columns whose rows count the tool's writes)."""
    return [
        ("reserve_seats", {"schedule_id": "s77", "seats": ["A1", "A2"], "reservation_password": "secret-1"},
         "cinema_reservation", {"status": "confirmed"}),
        ("cancel_reservation", {"reservation_id": reservation_id, "reservation_password": "secret-77"},
         "cinema_reservation", {"status": "cancelled"}),
        ("create_journal_entry", {"date": "2026-11-28", "description": "商品仕入", "lines": [
            {"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 10000}]},
         "ledger_journalentry", {}),
        ("calendar.create", {"title": "打ち合わせ", "start": "2099-01-01T10:00:00+09:00", "duration_min": 30},
         "reminders_event", {}),
        ("reminder.create", {"time": "2099-01-01T09:00:00+09:00", "note": "薬を飲む"}, "reminders_reminder", {}),
        ("message.send", {"to": "山田花子", "text": "今から向かいます"}, "reminders_message", {}),
    ]  # fmt: skip


class LosingProxy(AlternatingProxy):
    """The alternating proxy, losing the answer to a request when told to: the backend finishes the call, the
    client gets the response's start and then a dropped connection."""

    lose_next = False

    async def app(self, scope, receive, send):
        if not self.lose_next:
            return await super().app(scope, receive, send)
        self.lose_next = False

        async def lost(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message["headers"] if k.lower() != b"content-length"]
                await send({**message, "headers": headers})
            elif not message.get("more_body"):
                raise ConnectionResetError("the answer is lost on its way back")

        return await super().app(scope, receive, lost)


def tools_call(request_id: int, name: str, arguments: dict) -> dict:
    params = {"name": name, "arguments": arguments, "_meta": META}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.mark.slow
def test_a_dropped_answer_retried_on_the_other_process_writes_once(live_template, tmp_path):
    with live_site(live_template, tmp_path) as site:
        reservation_id = site.shell(SETUP)
        proxy = LosingProxy(site.start_servers({}, {}))
        with proxy as proxy_url:

            async def send_until_answered(name: str, arguments: dict, key: str):
                headers = {"Authorization": f"Bearer {site.key}", "Accept": "application/json, text/event-stream",
                           "MCP-Protocol-Version": VERSION, "Mcp-Method": "tools/call", "Mcp-Name": name,
                           "Idempotency-Key": key}  # fmt: skip
                dropped = 0
                async with httpx2.AsyncClient(timeout=30) as client:
                    for attempt in range(3):
                        try:
                            answer = await client.post(
                                f"{proxy_url}/mcp", json=tools_call(attempt, name, arguments), headers=headers
                            )
                            return dropped, answer
                        except httpx2.TransportError:
                            dropped += 1
                raise AssertionError(f"{name}: no answer in three attempts")

            outcomes = {}
            for number, (name, arguments, table, where) in enumerate(calls(reservation_id)):
                before = site.count(table, **where)
                proxy.lose_next = True
                dropped, answer = anyio.run(send_until_answered, name, arguments, f"agent-retry-{number}")
                outcomes[name] = (dropped, answer, site.count(table, **where) - before)
        sent = proxy.sent
    assert sent[0] == sent[1] == len(outcomes)  # each first try on one process, each retry on the other
    for name, (dropped, answer, written) in outcomes.items():
        result = answer.json()["result"]
        assert (name, dropped, written) == (name, 1, 1)
        assert answer.headers["idempotent-replayed"] == "true", name
        assert result["isError"] is False and result["_meta"]["mcpsite/idempotentReplayed"] is True, name
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
