"""Django's pages under ASGI: Django's WSGI handler, one worker-thread hop per request.

Every Django view here is sync, and so is every middleware. Django's own ASGIHandler loads the middleware chain in
async mode and crosses between the event loop and a thread for each sync middleware's request and response phase,
and again for the view, the response and its close. The WSGI handler runs the whole chain, the view and
`request_finished` in the calling thread, so one hop per request suffices. WSGI (PEP 3333) and `WSGIHandler` are
public, stable interfaces; this module owns the small translation between ASGI and WSGI, as an ASGI-to-WSGI server
adapter does, instead of depending on how ASGIHandler is built inside.

The request's body has already been read and bounded by `mcpsite.guard.RequestGuard`. A response is produced, read
and closed (`request_finished`: the thread's database connections are recycled) in one task on a pool of request
threads, so a thread's connections stay with it. A streaming response (an export, a feed) keeps its thread while its
chunks are sent, as under any WSGI server, and stops at the client's disconnect.
"""

from __future__ import annotations

import asyncio
import contextvars
import io
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler

from .mcp.auth import SCOPE_PRINCIPAL
from .mcp.jsonrpc import SCOPE_JSON

Headers = list[tuple[bytes, bytes]]


def wsgi_environ(scope: dict[str, Any], body: bytes) -> dict[str, Any]:
    """The WSGI environ of an ASGI HTTP scope (PEP 3333; the ASGI spec's "WSGI compatibility" section)."""
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client") or ("", 0)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": scope.get("root_path", "").encode("utf-8").decode("latin-1"),
        "PATH_INFO": scope["path"].encode("utf-8").decode("latin-1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1] or 80),
        "REMOTE_ADDR": client[0] or "",
        "REMOTE_PORT": str(client[1] or ""),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    for raw_name, raw_value in scope.get("headers", []):
        name, value = raw_name.decode("latin-1").upper().replace("-", "_"), raw_value.decode("latin-1")
        if name in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            environ[name] = value
            continue
        key = f"HTTP_{name}"
        # Repeated headers are joined as RFC 9110 allows (cookies with "; ").
        environ[key] = f"{environ[key]}{'; ' if name == 'COOKIE' else ','}{value}" if key in environ else value
    return environ


class DjangoASGI:
    """An ASGI application serving Django's `WSGIHandler` from a pool of request threads."""

    def __init__(self, threads: int | None = None) -> None:
        self.handler = WSGIHandler()
        self.threads = ThreadPoolExecutor(threads or settings.DJANGO_REQUEST_THREADS, "django-request")

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django serves HTTP here, not {scope['type']}")
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        environ = wsgi_environ(scope, bytes(body))
        for key in (SCOPE_PRINCIPAL, SCOPE_JSON):  # what the ingress learnt, for the view (request.META)
            if key in scope:
                environ[key] = scope[key]
        exchange = _Exchange(asyncio.get_running_loop())
        # In a copy of this task's context: the request's trace (its entry span) goes on in the thread.
        done = exchange.loop.run_in_executor(
            self.threads, contextvars.copy_context().run, self._respond, environ, exchange
        )
        try:
            whole = await exchange.started
            await send({"type": "http.response.start", "status": exchange.status, "headers": exchange.headers})
            if whole is not None:
                await send({"type": "http.response.body", "body": whole})
            else:
                await self._send_stream(exchange, receive, send)
        finally:
            exchange.stopped.set()
            await done

    def _respond(self, environ: dict[str, Any], exchange: _Exchange) -> None:
        """In one request thread: the response, read (or streamed) and closed (`request_finished`: Django's
        end-of-request clean-up, which recycles this thread's database connections)."""
        try:
            result: Any = self.handler(environ, exchange.start_response)
        except BaseException as exc:
            exchange.fail(exc)
            raise
        try:
            if not getattr(result, "streaming", False):
                exchange.start(b"".join(result))
                return
            exchange.start(None)
            for chunk in result:
                if not exchange.put(chunk):
                    return
            exchange.put(None)
        finally:
            result.close()

    @staticmethod
    async def _send_stream(exchange: _Exchange, receive: Callable, send: Callable) -> None:
        """A streaming response's chunks as they come, until its end or the client's disconnect."""
        disconnected = asyncio.ensure_future(_wait_for_disconnect(receive))
        try:
            while (chunk := await exchange.chunks.get()) is not None and not disconnected.done():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if not disconnected.done():
                await send({"type": "http.response.body", "body": b""})
        finally:
            disconnected.cancel()
            exchange.stopped.set()
            while not exchange.chunks.empty():  # unblock a producer waiting on a full queue
                exchange.chunks.get_nowait()


class _Exchange:
    """One request between the event loop and its thread: the status and headers, the whole body or the chunks of a
    streaming one, and whether the loop side has stopped listening."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.status = 500
        self.headers: Headers = []
        self.started: asyncio.Future[bytes | None] = loop.create_future()
        self.chunks: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=4)
        self.stopped = threading.Event()

    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable:
        self.status = int(status.split(" ", 1)[0])
        self.headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]
        return self._write

    @staticmethod
    def _write(data: bytes) -> None:
        raise NotImplementedError("Django never uses the WSGI write() callable")

    def start(self, whole: bytes | None) -> None:
        self.loop.call_soon_threadsafe(self.started.set_result, whole)

    def fail(self, exc: BaseException) -> None:
        self.loop.call_soon_threadsafe(self.started.set_exception, exc)

    def put(self, chunk: bytes | None) -> bool:
        """From the request thread: hand a chunk (None: the end) to the loop, waiting while the queue is full; False
        once the loop side has stopped (the client went away)."""
        while not self.stopped.is_set():
            try:
                asyncio.run_coroutine_threadsafe(asyncio.wait_for(self.chunks.put(chunk), 0.5), self.loop).result()
                return True
            except TimeoutError:
                continue
            except RuntimeError:  # the event loop is closed
                return False
        return False


async def _wait_for_disconnect(receive: Callable[[], Awaitable[dict]]) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
