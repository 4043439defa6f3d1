"""The ASGI application: MCP Streamable HTTP to the SDK, WebSocket to channels, the rest to Django.

Django has no lifespan handler of its own; this router answers lifespan events and runs the SDK's
session manager for the life of the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from channels.routing import ProtocolTypeRouter, URLRouter
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.http import FileResponse
from django.urls import path, re_path, set_script_prefix

from .checks import startup_refusal
from .core.scopes import server_info, tool_groups
from .guard import RequestGuard
from .mcp.http import McpHttpApp, mcp_groups_for_path
from .mcp.websocket import McpWebSocketConsumer

logger = logging.getLogger("mcpsite")

# Idle request threads kept for Django's later requests; more than this many concurrent requests start extra ones.
KEPT_REQUEST_THREADS = 64


class SyncChainASGIHandler(ASGIHandler):
    """Django's ASGI handler with its middleware chain loaded in sync mode and run in one worker-thread hop.

    Every view here is sync. Loaded in async mode (as ASGIHandler does), each of the eleven sync-capable
    middlewares crossed from the event loop to the request's thread and back for its process_request and
    process_response, and the view once more: py-spy on `/rpc` (bench/bench_cinema_booking.py) showed that
    ping-pong (asgiref's SyncToAsync/AsyncToSync, MiddlewareMixin.__acall__) holding the GIL nearly three times
    as long as the tool itself. In sync mode the chain, the view and the tool run in one thread, as under WSGI,
    with the same middlewares in the same order.
    """

    def __init__(self):
        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)
        self._idle_threads: list[ThreadPoolExecutor] = []

    async def __call__(self, scope, receive, send):
        """ASGIHandler's, with the request's thread kept for later requests. Without an executor of its own,
        asgiref's ThreadSensitiveContext started a thread for every request and another one to join it at the
        end (py-spy: Thread.start and the executor's set-up and shutdown on the event loop, bench_cinema_booking)."""
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        # One request at a time per thread, as ThreadSensitiveContext requires: as many threads as concurrent
        # requests, as before, of which KEPT_REQUEST_THREADS stay for later requests.
        thread = self._idle_threads.pop() if self._idle_threads else ThreadPoolExecutor(1, "django-request")
        try:
            async with ThreadSensitiveContext(executor=thread):
                await self.handle(scope, receive, send)
        finally:
            if len(self._idle_threads) < KEPT_REQUEST_THREADS:
                self._idle_threads.append(thread)
            else:  # a burst's extra threads end once their work is done
                thread.shutdown(wait=False)

    async def handle(self, scope, receive, send):
        """ASGIHandler.handle with the request's sync work in one hop to its thread.

        Django's crossed to the request's thread three times: request_started, the response, and its close()
        (request_finished) after sending, each a SyncToAsync round trip with its context copies (py-spy on `/rpc`,
        bench_cinema_booking: asgiref's thread_handler and the event loop's wake-ups around them). Here all three
        run in one call. A response held in memory is closed (its connections released) before it is sent, which
        is safe: its content is already built. A streaming response is sent as Django sends it, listening for the
        client's disconnect, and closed after.
        """
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        with contextlib.closing(body_file):
            set_script_prefix(get_script_prefix(scope))
            # thread_sensitive: the request's own thread (__call__'s ThreadSensitiveContext).
            response = await sync_to_async(self._respond, thread_sensitive=True)(scope, body_file)
            if not response.streaming:
                await self.send_response(response, send)
                return
            try:
                async with asyncio.TaskGroup() as tasks:
                    tasks.create_task(self.listen_for_disconnect(receive))
                    await self.send_response(response, send)
                    raise _Sent
            except* (_Sent, RequestAborted):
                pass
            await sync_to_async(response.close, thread_sensitive=True)()

    def _respond(self, scope, body_file):
        """request_started, the response, and (in memory) its close(), in the request's thread."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            response._handler_class = self.__class__
            if isinstance(response, FileResponse):  # larger chunks: the ASGI server does its own chunking
                response.block_size = self.chunk_size
        if not response.streaming:
            response.close()
        return response


class _Sent(Exception):
    """A streaming response was sent: ends the TaskGroup that listens for the client's disconnect meanwhile."""


django_app = SyncChainASGIHandler()


async def refuse_websocket(scope, receive, send) -> None:
    """Any other WebSocket path: closing before accepting makes the server answer the handshake with 403."""
    await receive()  # websocket.connect
    await send({"type": "websocket.close", "code": 4404})


channels_app = ProtocolTypeRouter(
    {
        "http": django_app,
        # Auth is a Bearer header, which a browser page cannot set on a WebSocket, so a foreign
        # Origin gains nothing; non-browser voice clients send no Origin at all.
        "websocket": URLRouter(
            [
                # The reminders seed's clients connect to the bare host (ws://127.0.0.1:7777): its three tools.
                path("", McpWebSocketConsumer.as_asgi(), {"group": "reminders"}),
                path("ws", McpWebSocketConsumer.as_asgi()),
                path("ws/<str:group>", McpWebSocketConsumer.as_asgi()),
                re_path(r"", refuse_websocket),
            ]
        ),
    }
)


class Application:
    def __init__(self) -> None:
        self.mcp = McpHttpApp()
        # `/mcp/<group>` of a group whose seed names its server states that name (serverInfo is fixed per SDK
        # server): an app of its own; the other groups' endpoints are served by `mcp`, as the site.
        named = {group: server_info([group]) for group in tool_groups()}
        self.mcp_named = {group: McpHttpApp(info) for group, info in named.items() if info != server_info(None)}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http" and (groups := mcp_groups_for_path(scope["path"])) is not False:
            mcp = self.mcp_named.get(groups[0], self.mcp) if groups else self.mcp
            await mcp(scope, receive, send)
        else:
            await channels_app(scope, receive, send)

    async def _lifespan(self, receive, send) -> None:
        await receive()  # lifespan.startup
        # A misconfigured site refuses to start (uvicorn exits, naming the problem) rather than fail every call.
        if (refusal := await sync_to_async(startup_refusal, thread_sensitive=False)()) is not None:
            await send({"type": "lifespan.startup.failed", "message": refusal})
            return
        async with contextlib.AsyncExitStack() as stack:
            try:
                for mcp in (self.mcp, *self.mcp_named.values()):
                    await stack.enter_async_context(mcp.lifespan())
            except Exception as exc:
                logger.exception("The MCP session manager did not start")
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})


# Body size, slow bodies and the API key are checked before Django or the SDK reads a body.
application = RequestGuard(Application())
