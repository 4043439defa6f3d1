"""MCP Streamable HTTP at `/mcp` (every group the key may use) and `/mcp/<group>`.

An ASGI app around the SDK's `StreamableHTTPSessionManager`: it authenticates the API key, records
it in the ASGI scope for the tool handlers, and binds each MCP session to the key that opened it (the
SDK answers 404 to a session id presented with another credential).
"""

from __future__ import annotations

import contextlib

from django.conf import settings
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from . import dispatch
from .auth import api_key_from_scope
from .errors import ServiceUnavailable, ToolError, Unauthorized
from .jsonutil import dumps
from .registry import GROUPS, CallContext
from .server import build_server

SCOPE_KEY = "mcpsite.api_key"
SCOPE_GROUPS = "mcpsite.groups"


def mcp_groups_for_path(path: str) -> list[str] | None | bool:
    """None for `/mcp` (all groups), [group] for `/mcp/<group>`, False when the path is not ours."""
    path = path.rstrip("/") or "/"
    if path == "/mcp":
        return None
    prefix, _, group = path.rpartition("/")
    if prefix == "/mcp" and group in GROUPS:
        return [group]
    return False


def _security_settings() -> TransportSecuritySettings:
    """DNS-rebinding protection tied to ALLOWED_HOSTS (any port), same-host origins only."""
    hosts, origins = [], []
    for host in settings.ALLOWED_HOSTS:
        if host == "*":
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        host = host.lstrip(".")
        hosts += [host, f"{host}:*"]
        origins += [f"http://{host}", f"https://{host}", f"http://{host}:*", f"https://{host}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def _context_from_request(ctx) -> tuple[CallContext, list[str] | None]:
    scope = ctx.request.scope
    return dispatch.call_context(transport="http", api_key=scope.get(SCOPE_KEY)), scope.get(SCOPE_GROUPS)


async def _send_json(send, status: int, body: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:
    payload = dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class McpHttpApp:
    def __init__(self) -> None:
        self.server = build_server(_context_from_request)
        self.manager = StreamableHTTPSessionManager(
            app=self.server,
            stateless=settings.MCP_STATELESS_HTTP,
            security_settings=_security_settings(),
            max_request_body_size=settings.MCP_MAX_BODY_BYTES,
        )
        self.running = False

    @contextlib.asynccontextmanager
    async def lifespan(self):
        async with self.manager.run():
            self.running = True
            try:
                yield
            finally:
                self.running = False

    async def __call__(self, scope, receive, send) -> None:
        if not self.running:
            # The SDK's session manager runs in the ASGI lifespan; a server started without it cannot serve MCP.
            error = ServiceUnavailable(data="The MCP transport needs the ASGI lifespan (uvicorn --lifespan on)")
            await self._refuse(send, error)
            return
        groups = mcp_groups_for_path(scope["path"])
        try:
            api_key = await api_key_from_scope(scope)
        except ToolError as exc:
            await self._refuse(send, exc)
            return
        scope = dict(scope)
        scope[SCOPE_KEY], scope[SCOPE_GROUPS] = api_key, groups
        if api_key is not None:
            # Sessions are bound to this principal by the SDK.
            token = AccessToken(token=api_key.digest, client_id=f"apikey:{api_key.pk}", scopes=list(api_key.scopes))
            scope["user"] = AuthenticatedUser(token)
        await self.manager.handle_request(scope, receive, send)

    @staticmethod
    async def _refuse(send, error: ToolError) -> None:
        extra = [(b"www-authenticate", b'Bearer realm="mcpsite"')] if isinstance(error, Unauthorized) else []
        body = {"jsonrpc": "2.0", "id": None, "error": error.as_jsonrpc()}
        await _send_json(send, error.http_status, body, extra)
