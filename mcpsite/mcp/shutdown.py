"""A server told to stop (SIGTERM, SIGINT) ends its open `subscriptions/listen` streams at once, as each ends at the
close of its lifetime (the listen result, the protocol's close: the client re-listens elsewhere), so the graceful
shutdown waits only for calls in flight, not for streams that may live an hour.

The server (uvicorn) owns the signals; `install()` chains a handler in front of its own from the ASGI lifespan, where
the server has installed it, and passes every signal on unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Iterator

import anyio

_streams: set[anyio.CancelScope] = set()
_stopping = threading.Event()


def install() -> None:
    """Hear SIGTERM and SIGINT before the server does (nothing where the server handles neither, or off the main
    thread, where signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        return
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        server_handler = signal.getsignal(number)
        if not callable(server_handler):
            continue

        def handler(signum, frame, server_handler=server_handler) -> None:
            _stopping.set()
            loop.call_soon_threadsafe(end_streams)
            server_handler(signum, frame)

        signal.signal(number, handler)


def end_streams() -> None:
    """End every open listen stream gracefully (on the event loop)."""
    for scope in list(_streams):
        scope.cancel()


@contextlib.contextmanager
def ending_on_stop(scope: anyio.CancelScope) -> Iterator[None]:
    """While the block runs, a stop ends `scope` (a listen stream's lifetime)."""
    if _stopping.is_set():
        scope.cancel()
    _streams.add(scope)
    try:
        yield
    finally:
        _streams.discard(scope)
