"""resources/subscribe across processes: who is subscribed here, and how an update reaches them.

A subscription lives in the MCP session that made it, so in the memory of one process (stateful HTTP with affinity,
or stdio). The change it waits for (a seat sold or freed) may be committed by any process: another uvicorn worker,
the seed JSON-RPC endpoint, the admin. So `publish` goes through the database every process shares:

- PostgreSQL: `pg_notify` on one channel; each process that holds subscriptions LISTENs on its own connection (a
  daemon thread) and hands each URI to its subscribers. NOTIFY is delivered to every listening process, its own too.
- SQLite (the single-process laptop default): no cross-process channel, so updates go straight to this process's
  subscribers.

Delivery is best effort, as MCP's notifications are: a session that is gone is dropped on the first failed send.
A listener that lost its connection announces every subscribed resource once it is back, since the updates of the
gap were not heard.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from django.db import connection, connections

logger = logging.getLogger("mcpsite.mcp")

CHANNEL = "mcpsite_resource_updated"
# pg_notify payloads are limited to 8000 bytes; a URI longer than this is never a real resource.
MAX_URI_BYTES = 7000
RECONNECT_SECONDS = 2.0
# How long the listener waits for notifications before checking whether it should stop.
POLL_SECONDS = 1.0


class Hub:
    """This process's subscriptions: URI -> {connection key: (session, event loop)}."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: dict[str, dict[int, tuple[Any, asyncio.AbstractEventLoop]]] = {}

    def subscribe(self, uri: str, key: int, session: Any, loop: asyncio.AbstractEventLoop) -> bool:
        """True when this is a new subscription (subscribing twice is one subscription)."""
        with self._lock:
            subscribers = self._subscribers.setdefault(uri, {})
            new = key not in subscribers
            subscribers[key] = (session, loop)
            return new

    def unsubscribe(self, uri: str, key: int) -> None:
        with self._lock:
            subscribers = self._subscribers.get(uri, {})
            subscribers.pop(key, None)
            if not subscribers:
                self._subscribers.pop(uri, None)

    def uris(self) -> list[str]:
        with self._lock:
            return list(self._subscribers)

    def count(self, uri: str) -> int:
        with self._lock:
            return len(self._subscribers.get(uri, {}))

    def deliver(self, uri: str) -> None:
        """Send notifications/resources/updated to every session subscribed to `uri` (from any thread)."""
        with self._lock:
            targets = list(self._subscribers.get(uri, {}).items())
        for key, (session, loop) in targets:
            coro = self._send(uri, key, session)
            try:
                asyncio.run_coroutine_threadsafe(coro, loop)
            except RuntimeError:  # the session's event loop is closed: the session is gone
                coro.close()
                self.unsubscribe(uri, key)

    async def _send(self, uri: str, key: int, session: Any) -> None:
        try:
            await session.send_resource_updated(uri)
        except Exception:  # a closed stream: the client went away without unsubscribing
            logger.debug("Dropping the subscription of a closed session to %s", uri)
            self.unsubscribe(uri, key)


hub = Hub()


def publish(uri: str) -> None:
    """Tell every process that the resource at `uri` changed. Call after the change is committed."""
    if connection.vendor == "postgresql":
        if len(uri.encode()) <= MAX_URI_BYTES:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, uri])
    else:
        hub.deliver(uri)


class Listener:
    """PostgreSQL only: LISTEN on CHANNEL in a daemon thread and deliver to this process's hub."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.listening = threading.Event()

    def ensure_started(self, wait: float = 10.0) -> None:
        """Start listening (once per process) and wait until LISTEN is in place, so an update committed after the
        subscription was acknowledged is never missed. Blocks: call from a worker thread."""
        if connections["default"].vendor != "postgresql":
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                params = connections["default"].get_connection_params()
                self._stop.clear()
                self._thread = threading.Thread(target=self._run, args=(params,), name="mcp-listen", daemon=True)
                self._thread.start()
        self.listening.wait(wait)

    def stop(self) -> None:
        """End the listener and its connection (tests: a test database cannot be dropped while it is connected)."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join()

    def _run(self, params: dict) -> None:
        import psycopg

        # Django's cursor class and adapters are for its own connections; this one only LISTENs.
        params = {k: v for k, v in params.items() if k not in ("cursor_factory", "context")}
        reconnecting = False
        while not self._stop.is_set():
            try:
                with psycopg.connect(**params, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    if reconnecting:
                        # What was committed while the connection was down went unheard: any subscribed resource
                        # may have changed, so each is announced once (a client re-reads; none misses a change).
                        for uri in hub.uris():
                            hub.deliver(uri)
                    while not self._stop.is_set():
                        for notify in conn.notifies(timeout=POLL_SECONDS):
                            hub.deliver(notify.payload)
            except Exception:
                logger.exception("Resource update listener lost its connection; reconnecting")
            finally:
                self.listening.clear()
            reconnecting = True
            self._stop.wait(RECONNECT_SECONDS)


listener = Listener()
