"""Seat maps on protocol 2026-07-28's subscriptions/listen (the HTTP app in process): a seat sold or freed by any
caller reaches the streams that asked for that show, and a stream carries only what its key may read (scopes and
owners as resources/read: the rest is dropped from the acknowledged filter). On PostgreSQL the event goes through
LISTEN/NOTIFY, on SQLite straight to this process; across two processes: mcpsite/tests/test_modern_live.py."""

from __future__ import annotations

import pytest

from cinema import services
from cinema.models import Reservation
from mcpsite.mcp import subscriptions, threads
from mcpsite.tests.modern import Exchange, envelope
from mcpsite.tests.test_serving import running_site

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

SEATS_S001 = "mcpsite://cinema/schedules/s001/seats"
SEATS_S002 = "mcpsite://cinema/schedules/s002/seats"


@pytest.fixture
def anyio_backend():
    return "asyncio"


def listen(id_, uris: list[str]) -> dict:
    return envelope(id_, "subscriptions/listen", {"notifications": {"resourceSubscriptions": uris}})


async def in_thread(fn, *args, **kwargs):
    """`fn` in a worker thread that closes its database connection (the test database is dropped at the end)."""
    return await threads.in_worker_thread(fn)(*args, **kwargs)


async def test_a_seat_sold_and_freed_reaches_the_stream_of_that_show(seed_world, api_key):
    _key, raw = api_key
    async with running_site() as app:
        stream = await Exchange(app, raw, listen("seats", [SEATS_S001])).start()
        ack = await stream.next_message()
        await in_thread(services.reservation_create, schedule_id="s002", seats=["A1"], password="secret12")
        await in_thread(services.reservation_create, schedule_id="s001", seats=["C3"], password="secret12")
        sold = await stream.next_message()
        reservation = await in_thread(Reservation.objects.get, schedule__public_id="s001")
        await in_thread(services.reservation_cancel, reservation=reservation, source=Reservation.Source.STAFF)
        freed = await stream.next_message()
        await stream.disconnect()
    assert ack["params"]["notifications"] == {"resourceSubscriptions": [SEATS_S001]}
    params = {"uri": SEATS_S001, "_meta": {"io.modelcontextprotocol/subscriptionId": "seats"}}
    expected = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": params}
    assert sold == expected and freed == expected  # s002's sale was not announced here


async def test_a_stream_announces_only_what_the_key_may_read(seed_world, make_api_key):
    """Out of scope (ledger for a cinema key), unknown (no show s999) and not updating (the film catalogue) are
    dropped; the acknowledgment says what is left. A key without the cinema scope gets no seat map at all."""
    _cinema, cinema_raw = await in_thread(make_api_key, scopes=["cinema"])
    _ledger, ledger_raw = await in_thread(make_api_key, scopes=["ledger"])
    asked = [SEATS_S001, "mcpsite://ledger/accounts", "mcpsite://cinema/schedules/s999/seats",
             "mcpsite://cinema/movies", SEATS_S001, SEATS_S002]  # fmt: skip
    async with running_site() as app:
        cinema = await Exchange(app, cinema_raw, listen(1, asked)).start()
        ledger = await Exchange(app, ledger_raw, listen(2, asked)).start()
        cinema_ack, ledger_ack = await cinema.next_message(), await ledger.next_message()
        await in_thread(services.reservation_create, schedule_id="s001", seats=["C3"], password="secret12")
        heard = await cinema.next_message()
        # The ledger key's stream hears nothing of it: its filter is empty. A ToolsListChanged it did not ask for
        # either; the next frame it gets is the graceful end.
        await cinema.disconnect()
        await ledger.disconnect()
    assert cinema_ack["params"]["notifications"] == {"resourceSubscriptions": [SEATS_S001, SEATS_S002]}
    assert ledger_ack["params"]["notifications"] == {}
    assert heard["params"]["uri"] == SEATS_S001
    assert subscriptions.bus.count() == 0
