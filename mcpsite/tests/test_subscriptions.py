"""The cross-process channel of resources/subscribe on PostgreSQL: what a listener does when its connection drops."""

import asyncio
import threading
import time

import pytest
from django.db import connection

from mcpsite.mcp import subscriptions

URI = "mcpsite://cinema/schedules/s001/seats"


class Session:
    def __init__(self) -> None:
        self.heard: list[str] = []

    async def send_resource_updated(self, uri: str) -> None:
        self.heard.append(uri)


@pytest.fixture
def session_loop():
    """A subscribed session's event loop, running in its own thread as uvicorn's would."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


def _heard_within(session: Session, seconds: float) -> list[str]:
    deadline = time.monotonic() + seconds
    while not session.heard and time.monotonic() < deadline:
        time.sleep(0.02)
    return session.heard


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_listener_back_from_a_lost_connection_announces_every_subscription(session_loop, monkeypatch):
    """A seat sold while the listener was reconnecting sent a NOTIFY nobody heard: once it listens again, each
    subscribed resource is announced, so the client re-reads instead of keeping a stale seat map."""
    monkeypatch.setattr(subscriptions, "RECONNECT_SECONDS", 0.05)
    session = Session()
    subscriptions.hub.subscribe(URI, key=1, session=session, loop=session_loop)
    try:
        subscriptions.listener.ensure_started()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = %s",
                [f"LISTEN {subscriptions.CHANNEL}"],
            )
            assert cursor.fetchone()[0] == 1
        assert _heard_within(session, 10) == [URI]
    finally:
        subscriptions.hub.unsubscribe(URI, key=1)
        subscriptions.listener.stop()
