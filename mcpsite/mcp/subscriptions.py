"""Resource updates and list changes across processes: one channel feeding both subscription mechanisms.

- 2026-07-28 `subscriptions/listen`: a listen stream is one long POST held by whichever process received it (SDK
  `ListenHandler`); `bus` is the SDK's `SubscriptionBus` for it.
- 2025-11-25 `resources/subscribe`: a subscription lives in the MCP session that made it (stateful HTTP with
  affinity, or stdio); `hub` holds them.

The change they wait for (a seat sold or freed) may be committed by any process: another uvicorn worker or host, the
seed JSON-RPC endpoint, the admin. So `publish` goes through what every process shares, and each process hands what
it hears to its own `hub` and `bus`:

- Redis pub/sub when the site's cache is Redis (REDIS_URL): PUBLISH on CHANNEL, a daemon thread SUBSCRIBEs.
- PostgreSQL otherwise: `pg_notify` on CHANNEL; a daemon thread LISTENs on its own connection.
- SQLite (the single-process laptop default): no cross-process channel, so events go straight to this process.

Either channel delivers to every listening process, its own too. A payload is the URI of a changed resource, or
`list_changed <tools|prompts|resources>` (a space never occurs in a URI).

Delivery is best effort, as MCP's notifications are: a session or stream that is gone is dropped. A listener that
lost its connection announces every subscribed resource once it is back (legacy subscriptions; listen streams are
ended instead, so their clients re-listen and re-read), since the events of the gap were not heard.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Callable, Generator
from typing import Any

from django.conf import settings
from django.db import connections
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from mcpsite.core.db import has_listen_notify, notify

logger = logging.getLogger("mcpsite.mcp")

CHANNEL = "mcpsite_resource_updated"
# pg_notify payloads are limited to 8000 bytes; a URI longer than this is never a real resource.
MAX_URI_BYTES = 7000
RECONNECT_SECONDS = 2.0
# How long the listener waits for notifications before checking whether it should stop.
POLL_SECONDS = 1.0

LIST_CHANGED_PREFIX = "list_changed "
_LIST_CHANGED: dict[str, ServerEvent] = {
    "tools": ToolsListChanged(),
    "prompts": PromptsListChanged(),
    "resources": ResourcesListChanged(),
}


def encode(event: ServerEvent) -> str:
    if isinstance(event, ResourceUpdated):
        return event.uri
    name = next(name for name, known in _LIST_CHANGED.items() if known == event)
    return LIST_CHANGED_PREFIX + name


def decode(payload: str) -> ServerEvent | None:
    if payload.startswith(LIST_CHANGED_PREFIX):
        return _LIST_CHANGED.get(payload.removeprefix(LIST_CHANGED_PREFIX))
    return ResourceUpdated(uri=payload) if payload and " " not in payload else None


class Hub:
    """This process's resources/subscribe subscriptions: URI -> {connection key: (session, event loop)}."""

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

Listener = Callable[[ServerEvent], None]


class EventBus:
    """The SDK's `SubscriptionBus` for this process's listen streams. `publish` goes through the cross-process channel
    (so it reaches every process's streams, this one's included, once); what the channel brings is handed to the
    streams here by `deliver`, on each stream's event loop, as the SDK's bus contract says."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[object, tuple[Listener, asyncio.AbstractEventLoop]] = {}
        # Weak: a server built and dropped (tests, each stdio run) must not be kept alive by the process's bus.
        self._gap_handlers: list[weakref.WeakMethod] = []

    async def publish(self, event: ServerEvent) -> None:
        from .threads import in_worker_thread  # the database is not for the event loop

        await in_worker_thread(publish_event)(event)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Register a listen stream's `listener` (call on its event loop); returns the idempotent unsubscribe."""
        token, loop = object(), asyncio.get_running_loop()
        with self._lock:
            self._listeners[token] = (listener, loop)

        def unsubscribe() -> None:
            with self._lock:
                self._listeners.pop(token, None)

        return unsubscribe

    def count(self) -> int:
        """Open listen streams in this process (tests: nothing leaks)."""
        with self._lock:
            return len(self._listeners)

    def deliver(self, event: ServerEvent) -> None:
        """Hand `event` to every listen stream of this process (from any thread)."""
        with self._lock:
            targets = list(self._listeners.items())
        for token, (listener, loop) in targets:
            try:
                loop.call_soon_threadsafe(listener, event)
            except RuntimeError:  # the stream's event loop is closed: the stream is gone
                with self._lock:
                    self._listeners.pop(token, None)

    def on_gap(self, handler: Callable[[], None]) -> None:
        """Call the bound method `handler` on the streams' event loop when events may have been missed (the
        channel reconnected), for as long as its object lives."""
        with self._lock:
            self._gap_handlers = [ref for ref in self._gap_handlers if ref() is not None]
            self._gap_handlers.append(weakref.WeakMethod(handler))

    def gap(self) -> None:
        with self._lock:
            loops = {id(loop): loop for _, loop in self._listeners.values()}.values()
            handlers = [handler for ref in self._gap_handlers if (handler := ref()) is not None]
        for loop in loops:
            for handler in handlers:
                try:
                    loop.call_soon_threadsafe(handler)
                except RuntimeError:  # the loop is closed: its streams are gone
                    break


bus = EventBus()


def _deliver(payload: str) -> None:
    event = decode(payload)
    if event is None:
        logger.warning("Ignoring an unknown event on %s", CHANNEL)
        return
    if isinstance(event, ResourceUpdated):
        hub.deliver(event.uri)
    bus.deliver(event)


def _redis_client() -> Any:
    """A Redis client on the site's cache server (channel_kind() == "redis": REDIS_URL)."""
    import redis

    cache = settings.CACHES["default"]

    password = cache.get("OPTIONS", {}).get("PASSWORD")
    return redis.Redis.from_url(cache["LOCATION"], password=password)


_redis_lock = threading.Lock()
_redis_publishers: dict[str, Any] = {}  # by cache LOCATION: one connection pool per Redis server


def _redis_publisher() -> Any:
    location = settings.CACHES["default"]["LOCATION"]
    with _redis_lock:
        if location not in _redis_publishers:
            _redis_publishers[location] = _redis_client()
        return _redis_publishers[location]


def channel_kind() -> str:
    """ "redis", "postgresql" or "local" (this process only)."""
    if settings.CACHES["default"]["BACKEND"].startswith("django_redis."):
        return "redis"
    return "postgresql" if has_listen_notify(connections["default"]) else "local"


def publish_event(event: ServerEvent) -> None:
    """Tell every process about `event`. Call after the change is committed (blocks: not on the event loop)."""
    payload = encode(event)
    kind = channel_kind()
    if kind == "redis":
        _redis_publisher().publish(CHANNEL, payload)
    elif kind == "postgresql":
        if len(payload.encode()) <= MAX_URI_BYTES:
            notify(CHANNEL, payload)
    else:
        _deliver(payload)


def publish_list_changed(kind: str) -> None:
    """Tell every process that the list of `kind` ("tools", "prompts", "resources") changed."""
    publish_event(_LIST_CHANGED[kind])


def publish(uri: str) -> None:
    """Tell every process that the resource at `uri` changed. Call after the change is committed."""
    publish_event(ResourceUpdated(uri=uri))


class ChannelListener:
    """Redis or PostgreSQL: hear CHANNEL in a daemon thread and deliver to this process's hub and bus."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.listening = threading.Event()

    def ensure_started(self, wait: float = 10.0) -> None:
        """Start listening (once per process) and wait until it is in place, so an update committed after the
        subscription was acknowledged is never missed. Blocks: call from a worker thread."""
        kind = channel_kind()
        if kind == "local":
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                source = self._redis if kind == "redis" else self._postgresql
                self._stop.clear()
                self._thread = threading.Thread(target=self._run, args=(source,), name="mcp-listen", daemon=True)
                self._thread.start()
        self.listening.wait(wait)

    def stop(self) -> None:
        """End the listener and its connection (tests: a test database cannot be dropped while it is connected)."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join()

    def _postgresql(self) -> Generator[str | None]:
        """Payloads heard on CHANNEL (None every POLL_SECONDS without one), from LISTEN on a connection of its own."""
        import psycopg

        params = connections["default"].get_connection_params()
        # Django's cursor class and adapters are for its own connections; this one only LISTENs.
        params = {k: v for k, v in params.items() if k not in ("cursor_factory", "context")}
        with psycopg.connect(**params, autocommit=True) as conn:
            conn.execute(f"LISTEN {CHANNEL}")
            yield None
            while True:
                for notify in conn.notifies(timeout=POLL_SECONDS):
                    yield notify.payload
                yield None

    def _redis(self) -> Generator[str | None]:
        """Payloads heard on CHANNEL (None every POLL_SECONDS without one), from SUBSCRIBE."""
        client = _redis_client()
        pubsub = client.pubsub()
        try:
            pubsub.subscribe(CHANNEL)
            # In place once the server confirms the subscription.
            while (confirmed := pubsub.get_message(timeout=POLL_SECONDS)) is None or confirmed["type"] != "subscribe":
                if self._stop.is_set():
                    return
            yield None
            while True:
                message = pubsub.get_message(timeout=POLL_SECONDS)
                yield message["data"].decode() if message and message["type"] == "message" else None
        finally:
            pubsub.close()
            client.close()

    def _run(self, source: Callable[[], Generator[str | None]]) -> None:
        reconnecting = False
        while not self._stop.is_set():
            try:
                payloads = source()
                try:
                    next(payloads)  # in place
                    self.listening.set()
                    if reconnecting:
                        self._announce_gap()
                    for payload in payloads:
                        if self._stop.is_set():
                            break
                        if payload is not None:
                            _deliver(payload)
                finally:
                    payloads.close()
            except Exception:
                logger.exception("Resource update listener lost its connection; reconnecting")
            finally:
                self.listening.clear()
            reconnecting = True
            self._stop.wait(RECONNECT_SECONDS)

    @staticmethod
    def _announce_gap() -> None:
        """What was committed while the connection was down went unheard: any subscribed resource may have changed,
        so each legacy subscription is announced once (a client re-reads; none misses a change) and the listen
        streams are ended (their clients re-listen and re-read)."""
        for uri in hub.uris():
            hub.deliver(uri)
        bus.gap()


listener = ChannelListener()
