"""The ASGI application: MCP Streamable HTTP to the SDK, WebSocket to channels, the rest to Django.

Django has no lifespan handler of its own; this router answers lifespan events and runs the SDK's
session manager for the life of the process.
"""

from __future__ import annotations

import contextlib
import logging
import threading

from asgiref.sync import sync_to_async
from channels.routing import ProtocolTypeRouter, URLRouter
from django.urls import path, re_path

from .checks import startup_refusal
from .core.scopes import server_info, tool_groups
from .django_asgi import DjangoASGI
from .guard import RequestGuard
from .mcp import shutdown
from .mcp.http import McpHttpApp, mcp_groups_for_path
from .mcp.websocket import McpWebSocketConsumer
from .observability import process_ended, start_sampler

logger = logging.getLogger("mcpsite")

django_app = DjangoASGI()


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
                re_path(r"", refuse_websocket),  # type: ignore[arg-type]  # URLRouter routes to ASGI apps
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
        shutdown.install()  # a stop ends the listen streams at once
        sampling = threading.Event()
        start_sampler(sampling)
        async with contextlib.AsyncExitStack() as stack:
            stack.callback(process_ended)
            stack.callback(sampling.set)
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
