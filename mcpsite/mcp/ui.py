"""MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): views a host renders in a sandboxed iframe (docs/mcp-apps.md).

An app declares a view in its `resources.py` with `view(...)`: a `ui://<group>/<name>` resource served as
`text/html;profile=mcp-app`, scoped to the app's tool group like every resource, and names it on a tool
(`@tool(ui=...)`). A view is one self-contained HTML document: its own markup, style and script, plus the shared
bridge (`ui_views/bridge.js`: the MCP Apps postMessage JSON-RPC, locale, DOM helpers) and stylesheet
(`ui_views/base.css`), inlined here when the document is first served. No build step, no external origin: the
declared CSP (`_meta.ui.csp`) allows none, and the document's own CSP admits only its inline scripts, by hash.

Clients that did not negotiate the extension (`client_supports_apps`) see none of it: tools/list and tools/call
answer them byte for byte as before (server.py), app-only tools do not exist for them (dispatch.py), the views
are not listed, and `initialize` names the extension only where a view is served (`AppsAdvertised`).

A tool that confirms (`confirm=True`) and has a view asks a client with Apps on a card in that view
(`CardInteraction`): the token it carries is sealed under the card keys (`seal_card`), the person's Send brings
it back through the tool's app-only companion.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import json
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import mcp_types as types
from django.conf import settings
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, client_supports_apps
from mcp.server.request_state import AESGCMRequestStateCodec, InvalidRequestState

from mcpsite.core import metrics
from mcpsite.core.errors import Conflict, Forbidden, InvalidParams
from mcpsite.core.jsonutil import dumps, to_jsonable
from mcpsite.core.scopes import READ

from . import calls, dispatch, registry, requeststate, resources
from .arguments import validate_arguments
from .interaction import Confirmation, ConfirmInView, Elicitation, Interaction
from .registry import CallContext, ToolSpec
from .wire import as_jsonrpc

__all__ = ["APP_MIME_TYPE", "EXTENSION_ID", "apps_enabled", "document", "served_in", "tool_meta", "view"]

SHARED = Path(__file__).with_name("ui_views")
# Markers a view's HTML leaves for the shared parts.
BRIDGE_MARKER = "/* mcpsite:bridge */"
BASE_CSS_MARKER = "/* mcpsite:base-css */"
CSP_MARKER = "mcpsite:csp"
# Declared to the host (`_meta.ui.csp`): no origin for anything (fetches, scripts, styles, fonts, images, frames).
CSP: dict[str, list[str]] = {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}
# A view changes only with a deploy: hosts may keep it an hour (resources/read `ttlMs`, private to the key).
VIEW_TTL_MS = 3_600_000

_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def apps_enabled(sdk_ctx: Any) -> bool:
    """Whether this request's client negotiated MCP Apps (and the site serves them: MCP_APPS)."""
    return settings.MCP_APPS and client_supports_apps(sdk_ctx)


@functools.cache
def document(path: Path) -> str:
    """The view at `path` as served: the shared bridge and stylesheet inlined, and a Content-Security-Policy that
    admits no origin and only the document's own inline scripts (by SHA-256), so an injected script cannot run."""
    html = path.read_text(encoding="utf-8")
    for marker, shared in ((BRIDGE_MARKER, "bridge.js"), (BASE_CSS_MARKER, "base.css")):
        if marker not in html:
            raise ValueError(f"{path}: the view must include {marker}")
        html = html.replace(marker, (SHARED / shared).read_text(encoding="utf-8"))
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"
        for script in _SCRIPT.findall(html)
    )
    policy = (
        f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; img-src data:; "
        "connect-src 'none'; form-action 'none'; base-uri 'none'"
    )
    if CSP_MARKER not in html:
        raise ValueError(f"{path}: the view must include a CSP <meta> whose content is {CSP_MARKER}")
    return html.replace(CSP_MARKER, policy)


def view(*, uri: str, group: str, name: str, title: str, description: str, path: Path) -> None:
    """Register the view at `path` (an HTML file with the markers above) as the `ui://` resource `uri`."""
    if not uri.startswith("ui://"):
        raise ValueError(f"MCP Apps views use the ui:// scheme, got {uri!r}")

    @resources.resource(
        uri=uri,
        name=name,
        group=group,
        title=title,
        description=description,
        mime_type=APP_MIME_TYPE,
        meta={"ui": {"csp": CSP, "prefersBorder": True}},
        apps_only=True,
        cache_ttl_ms=VIEW_TTL_MS,
    )
    def read(ctx: CallContext) -> str:
        return document(path)


def is_view(spec: resources.ResourceSpec) -> bool:
    return spec.mime_type == APP_MIME_TYPE


def served_in(groups: Iterable[str]) -> bool:
    """Whether an endpoint serving `groups` (narrowed to the caller's scopes) serves any view."""
    return settings.MCP_APPS and any(is_view(spec) for spec in resources.resources(groups))


def tool_meta(spec: ToolSpec) -> dict[str, Any] | None:
    """A tool's `_meta` for a client with MCP Apps: its view, and `visibility: ["app"]` for a view-only tool."""
    if spec.ui is None:
        return None
    ui: dict[str, Any] = {"resourceUri": spec.ui}
    if spec.app_only:
        ui["visibility"] = ["app"]
    return {"ui": ui}


def template_meta(spec: resources.TemplateSpec, call_ctx: CallContext) -> dict[str, Any] | None:
    """A template's view (`_meta.ui.resourceUri`), for a client that negotiated MCP Apps."""
    return {"ui": {"resourceUri": spec.ui}} if spec.ui and call_ctx.apps else None


class AppsAdvertised:
    """Server middleware: `initialize` and `server/discover` name the MCP Apps extension exactly where a view is
    served (MCP_APPS on, and the endpoint's groups, narrowed to the caller's scopes, include one). On 2025-11-25 the
    SDK's result surface has no `extensions`; MCP Apps hosts read it there too, so it is added after the SDK's
    pass."""

    def __init__(self, request_context: Callable[[Any], tuple[CallContext, list[str] | None]]) -> None:
        self.request_context = request_context

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        result = await call_next(ctx)
        if ctx.method not in ("initialize", "server/discover") or not isinstance(result, dict):
            return result
        capabilities = dict(result.get("capabilities") or {})
        extensions = dict(capabilities.get("extensions") or {})
        call_ctx, groups = self.request_context(ctx)
        if served_in(dispatch.visible_groups(call_ctx, groups, READ)):  # views are read
            extensions[EXTENSION_ID] = {}
        else:
            extensions.pop(EXTENSION_ID, None)
        capabilities.pop("extensions", None)
        if extensions:
            capabilities["extensions"] = extensions
        return {**result, "capabilities": capabilities}


# --- confirmation cards ----------------------------------------------------------------------------

# The confirmation cards of MCP Apps views (CardInteraction): their own keys, so a card token is never a
# valid requestState nor the other way round.
CARD_KEY_SALT = "mcpsite.mcp.apps.card"


class CardInteraction(Interaction):
    """MCP Apps: a tool's confirmation is a card in its view (Send / Cancel), for a client that negotiated Apps.

    The tool's call does not act: `confirm()` raises `ConfirmInView` with a token sealed under the site's card keys
    (seal_card) naming the tool, its arguments, a digest of the question, the caller and a fresh
    nonce. The person's Send calls the tool's app-only companion with that token (`confirmed_in_view`); `confirm()`
    then accepts only that question (a changed address asks again) and the nonce becomes the confirmation's key,
    stored unique with the write, so one card sends once however often Send arrives, on any process. Everything
    else (progress, cancellation, round-trip answers) is the session's interaction, `inner`."""

    def __init__(self, inner: calls.SessionInteraction, tool: str, arguments: Any, principal: str | None) -> None:
        self.inner, self._tool, self._arguments, self._principal = inner, tool, arguments, principal
        self._accepted: dict[str, Any] | None = None
        self._asked = False
        self._key: str | None = None

    def can_confirm(self) -> bool:
        return True

    def confirm(self, message: str, details: dict[str, Any] | None = None) -> Confirmation:
        digest = calls.text_digest(message)
        if self._accepted is not None:
            if self._accepted["d"] != digest:
                raise Conflict(data="The details changed since the card was shown; ask again for a new card")
            self._asked, self._key = True, self._accepted["n"]
            return calls.answered(Confirmation.ACCEPT)
        claims = {
            "t": self._tool,
            "a": self._arguments,
            "d": digest,
            "n": secrets.token_urlsafe(16),
            "p": _principal_digest(self._principal),
        }
        metrics.confirmation("asked")
        raise ConfirmInView(message, details, seal_card(claims))

    def confirmed_in_view(self, token: str, tool: str) -> dict[str, Any]:
        claims = unseal_card(token)
        if claims is None or claims.get("t") != tool or claims.get("p") != _principal_digest(self._principal):
            raise InvalidParams("Invalid or expired confirmation; ask again for a new card")
        spec = registry.get(tool)
        arguments = claims.get("a")
        if spec is None or not isinstance(claims.get("d"), str) or not claims.get("n"):
            raise InvalidParams("Invalid or expired confirmation; ask again for a new card")
        self._accepted = claims
        return validate_arguments(spec, arguments)

    def asked(self) -> bool:
        return self._asked

    @property
    def confirmation_key(self) -> str | None:
        return self._key

    def elicit(self, message: str, schema: dict[str, Any]) -> Elicitation:
        return self.inner.elicit(message, schema)

    def sample(self, prompt: str, max_tokens: int) -> str:
        return self.inner.sample(prompt, max_tokens)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        self.inner.progress(done, total, message)

    def client_can(self, capability: str) -> bool:
        return self.inner.client_can(capability)

    def log(self, level: str, data: object) -> None:
        self.inner.log(level, data)

    def cancelled(self) -> bool:
        return self.inner.cancelled()

    def input_responses(self) -> dict[str, Any]:
        return self.inner.input_responses()

    def request_state(self) -> str | None:
        return self.inner.request_state()


def _principal_digest(principal: str | None) -> str:
    return hashlib.sha256((principal or "").encode()).hexdigest()


def with_card(call_ctx: CallContext, spec: ToolSpec | None, name: str, arguments: Any) -> CallContext:
    """For a client with MCP Apps, a tool that confirms in its view (`confirm` and `ui`, or its app-only companion)
    asks with a card (`CardInteraction`); every other call is unchanged."""
    if not call_ctx.apps or spec is None or not (spec.confirm and spec.ui):
        return call_ctx
    assert isinstance(call_ctx.interaction, calls.SessionInteraction)
    card = CardInteraction(call_ctx.interaction, name, arguments, requeststate.principal_of(call_ctx))
    return dataclasses.replace(call_ctx, interaction=card)


def card_result(spec: ToolSpec, asked: ConfirmInView) -> types.CallToolResult:
    """The answer to a call whose confirmation is a card: the tool's own "not done" shape for the model (nothing was
    done, the person decides in the view), and, in `_meta` (the view's, not the model's), the card and its token."""
    waiting = AwaitingPerson(data="Not done yet: the person confirms or cancels on the card shown with this result")
    payload = to_jsonable(spec.render_error(waiting) if spec.render_error else as_jsonrpc(waiting))
    card = {"question": asked.question, "details": asked.details, "token": asked.token}
    return types.CallToolResult.model_validate(
        {
            "content": [{"type": "text", "text": dumps(payload)}],
            "structuredContent": payload,
            "isError": False,
            "_meta": {CARD_META: card},
        }
    )


# The `_meta` key of a confirmation card in a tool result (for the view).
CARD_META = "mcpsite/confirmation"


class AwaitingPerson(Forbidden):
    message = "Awaiting the person's confirmation"


def seal_card(claims: dict[str, Any]) -> str:
    """`claims` (JSON), encrypted and authenticated (AES-256-GCM, the SDK's codec) under the card keys, with this
    server as audience and an expiry MCP_REQUEST_STATE_TTL from now (a card answers like a round trip)."""
    envelope = {**claims, "aud": settings.MCP_SERVER_NAME, "exp": time.time() + settings.MCP_REQUEST_STATE_TTL}
    return AESGCMRequestStateCodec(requeststate.request_state_keys(CARD_KEY_SALT)).seal(json.dumps(envelope).encode())


def unseal_card(token: Any) -> dict[str, Any] | None:
    """The claims of a card token this site sealed for this server and that has not expired; None for anything
    else (forged, altered, another server's, expired, not a string)."""
    if not isinstance(token, str):
        return None
    try:
        claims = json.loads(AESGCMRequestStateCodec(requeststate.request_state_keys(CARD_KEY_SALT)).unseal(token))
    except (InvalidRequestState, ValueError):
        return None
    if not isinstance(claims, dict) or claims.get("aud") != settings.MCP_SERVER_NAME:
        return None
    expires = claims.get("exp")
    if not isinstance(expires, int | float) or not time.time() < expires:
        return None
    return claims
