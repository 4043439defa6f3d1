"""Per-key caps, one set per process whatever endpoint serves the key: open listen streams, stateful MCP sessions,
and the worker threads a key's calls hold at once (MCP_KEY_CONCURRENCY on every transport)."""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from dataclasses import dataclass, field

from django.conf import settings
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER

from mcpsite.core import metrics
from mcpsite.core.errors import RateLimited

_SESSION_HEADER = MCP_SESSION_ID_HEADER.lower().encode()


class ListenStreams:
    """Open `subscriptions/listen` streams per API key in this process, capped at MCP_LISTEN_MAX_PER_KEY."""

    def __init__(self) -> None:
        self._open: dict[int, int] = {}

    def count(self, key_pk: int) -> int:
        return self._open.get(key_pk, 0)

    @contextlib.contextmanager
    def hold(self, key_pk: int):
        """Count one stream for the block; raises RateLimited when the key already holds the cap."""
        if self.count(key_pk) >= settings.MCP_LISTEN_MAX_PER_KEY:
            metrics.rate_limited("listen_streams")
            raise RateLimited("Too many open listen streams for this API key; close one first")
        self._open[key_pk] = self.count(key_pk) + 1
        try:
            yield
        finally:
            self._open[key_pk] -= 1
            if not self._open[key_pk]:
                del self._open[key_pk]


@dataclass
class _Session:
    key_pk: int
    in_flight: int = 0
    last_seen: float = field(default_factory=time.monotonic)


class KeySessions:
    """Stateful mode: the sessions each API key holds open in this process, followed through the SDK's answers (a
    new `Mcp-Session-Id` on a POST without one; 404 for a session it no longer has; a DELETE) and ended by the SDK's
    own idle rule (MCP_SESSION_IDLE_TIMEOUT seconds with no request in flight)."""

    def __init__(self) -> None:
        self._sessions: dict[str, _Session] = {}

    def count(self, key_pk: int) -> int:
        now = time.monotonic()
        for session_id, session in list(self._sessions.items()):
            if not session.in_flight and now - session.last_seen >= settings.MCP_SESSION_IDLE_TIMEOUT:
                del self._sessions[session_id]  # the SDK has closed it by now
        return sum(1 for session in self._sessions.values() if session.key_pk == key_pk)

    async def serve(self, key_pk: int, scope, handle, receive, send) -> None:
        """`handle` the request, following the session it opens, uses or ends."""
        session_id = next((v.decode() for k, v in scope["headers"] if k == _SESSION_HEADER), None)
        session = self._sessions.get(session_id) if session_id is not None else None
        status = 0

        async def watched_send(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                opened = next((v.decode() for k, v in message.get("headers", []) if k == _SESSION_HEADER), None)
                if session_id is None and opened is not None and status < 300:
                    self._sessions[opened] = _Session(key_pk)
            await send(message)

        if session is not None:
            session.in_flight += 1
        try:
            await handle(scope, receive, watched_send)
        finally:
            if session is not None:
                session.in_flight -= 1
                session.last_seen = time.monotonic()
            if session_id is not None and (status == 404 or (scope["method"] == "DELETE" and status < 300)):
                self._sessions.pop(session_id, None)


# Per process and event loop: how many calls each key has in worker threads now (bounded by MCP_KEY_CONCURRENCY),
# and of those in the upstream pool (bounded by MCP_KEY_UPSTREAM_THREADS); the rest wait on the event loop,
# holding no thread.
_key_slots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_key_upstream_slots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _per_key(table: weakref.WeakKeyDictionary, api_key, size: int) -> asyncio.Semaphore | contextlib.nullcontext:
    if api_key is None:  # stdio and other trusted local callers
        return contextlib.nullcontext()
    slots = table.setdefault(asyncio.get_running_loop(), {})
    if api_key.pk not in slots:
        slots[api_key.pk] = asyncio.Semaphore(size)
    return slots[api_key.pk]


def key_slot(api_key) -> asyncio.Semaphore | contextlib.nullcontext:
    """One of the key's MCP_KEY_CONCURRENCY slots: hold it while the key's work holds a worker thread."""
    return _per_key(_key_slots, api_key, settings.MCP_KEY_CONCURRENCY)


def key_upstream_slot(api_key) -> asyncio.Semaphore | contextlib.nullcontext:
    """One of the key's MCP_KEY_UPSTREAM_THREADS slots in the upstream pool: two keys with MCP_KEY_CONCURRENCY
    calls each stuck on a dead upstream filled the whole pool, and every other tenant's geo call waited."""
    return _per_key(_key_upstream_slots, api_key, settings.MCP_KEY_UPSTREAM_THREADS)


listen_streams = ListenStreams()
key_sessions = KeySessions()
