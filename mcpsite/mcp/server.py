"""One low-level MCP SDK server, built from the registry, for Streamable HTTP and stdio.

The SDK owns the protocol (initialize, sessions, ping, JSON-RPC framing); our handlers only turn
tools/list and tools/call into dispatcher calls. `context_for` tells a handler who is calling: the
HTTP app stores the authenticated key in the ASGI scope; stdio passes a fixed trusted context.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from mcpsite.core.errors import ApplicationError, RateLimited, ServiceUnavailable, Unauthorized, UnknownTool
from mcpsite.core.jsonutil import dumps, to_jsonable
from mcpsite.core.scopes import ServerInfo, server_info

from . import calls, dispatch, features, idempotency, registry, requeststate, ui
from .interaction import ConfirmInView, InputRequired
from .refusals import SCOPE_REFUSAL
from .registry import CallContext, ToolResult, ToolSpec
from .wire import INVALID_PARAMS, as_jsonrpc, jsonrpc_code

ContextFactory = Callable[[Any], tuple[CallContext, list[str] | None]]

INSTRUCTIONS = (
    "Business tools: cinema seats, double-entry books, Japanese administrative codes, shop search and "
    "AP2 carts, reminders and messages. Tool results are JSON; errors carry a code and a message."
)


# Cache hints (2026-07-28, SEP-2549). Every list depends on the caller's scopes and the endpoint's groups, so each
# is `private`. The tool, prompt and template lists change only with a deploy or when staff change a key's scopes:
# five minutes is the longest a client shows what its key just lost (a call is refused all the same). The resource
# list names upcoming shows' seat maps, which come and go with the schedule: one minute.
CACHE_HINTS: dict[CacheableMethod, CacheHint] = {
    "tools/list": CacheHint(ttl_ms=300_000, scope="private"),
    "prompts/list": CacheHint(ttl_ms=300_000, scope="private"),
    "resources/templates/list": CacheHint(ttl_ms=300_000, scope="private"),
    "resources/list": CacheHint(ttl_ms=60_000, scope="private"),
}


def _tool(spec: ToolSpec, *, apps: bool = False) -> types.Tool:
    """The tools/list entry (the one every transport lists, ToolSpec.describe); with its view (`_meta.ui`) for a
    client that negotiated MCP Apps (ui.py)."""
    entry = spec.describe()
    if apps and (meta := ui.tool_meta(spec)) is not None:
        entry["_meta"] = meta
    return types.Tool.model_validate(entry)


def result_fields(payload: Any, *, is_error: bool) -> dict[str, Any]:
    """A tool's answer as a `CallToolResult`'s wire fields, from one plain-JSON payload (`to_jsonable`'s output, as
    the dispatcher returns results): `structuredContent` for programs and a compact UTF-8 text copy for the model
    (the SDK's default copy is indented and \\u-escaped). The copies cannot disagree: the text is the structured
    value, dumped. `resultType` is the field 2026-07-28 requires; the SDK's per-revision schema drops it on older
    revisions."""
    text = [{"text": dumps(payload), "type": "text"}]
    return {"content": text, "isError": is_error, "resultType": "complete", "structuredContent": payload}


async def tool_call_result(
    call: Awaitable[ToolResult], spec: ToolSpec | None, ctx: CallContext, scope: dict[str, Any] | None = None
) -> dict[str, Any] | types.CallToolResult | types.InputRequiredResult:
    """The result of one `tools/call` of `spec` running as `call` (dispatch.acall_tool, with the context `ctx`):
    the wire fields of a plain answer, marked when it is a replay (idempotency.marked_meta), the model of an answer
    in content blocks, of a confirmation card or of a question (`input_required`); MCPError for the failures MCP
    answers as protocol errors (an unknown tool, the key's rate, a revoked key). `scope`: the HTTP request's, where
    a dependency that is down is also the answer's 503 with `Retry-After`."""
    result = await _tool_answer(call, spec, scope)
    return idempotency.marked_meta(ctx, result) if isinstance(result, dict) else result


async def _tool_answer(
    call: Awaitable[ToolResult], spec: ToolSpec | None, scope: dict[str, Any] | None
) -> dict[str, Any] | types.CallToolResult | types.InputRequiredResult:
    try:
        result = await call
    except ConfirmInView as asked:  # an MCP Apps client: the person answers on the tool's card
        assert spec is not None
        return ui.card_result(spec, asked)
    except InputRequired as asked:
        return calls.input_required_result(asked)
    except UnknownTool as exc:
        # MCP: an unknown tool is a protocol error (-32602), not a tool result.
        raise MCPError(code=INVALID_PARAMS, message=exc.message) from None
    except (RateLimited, Unauthorized) as exc:
        raise MCPError(code=jsonrpc_code(exc), message=exc.message) from None
    except ServiceUnavailable as exc:  # a dependency is down: a protocol error saying when to retry
        if scope is not None:
            scope[SCOPE_REFUSAL] = exc
        raise MCPError(code=jsonrpc_code(exc), message=exc.message, data=exc.data) from None
    except ApplicationError as exc:  # a tool failure as MCP wants it: isError, the error as text and structured
        return result_fields(to_jsonable(as_jsonrpc(exc)), is_error=True)
    if result.content is not None:
        answer = {"content": list(result.content.blocks), "structuredContent": result.content.structured}
        return types.CallToolResult.model_validate(to_jsonable(answer))
    fields = result_fields(result.data, is_error=result.is_error)
    if result.meta is not None:  # for the tool's view (MCP Apps)
        fields["_meta"] = result.meta
    return fields


def tool_input_schema(name: str) -> dict[str, Any] | None:
    """A tool's input schema by name, for the SDK's `Mcp-Param-*` header check on 2026-07-28 `tools/call` (without
    it the SDK runs the whole tools/list handler, audited and counted against the key's rate, on every call). Not
    scoped to the caller, as the SDK says: the call itself is checked by the dispatcher right after."""
    spec = registry.get(name)
    return spec.input_schema if spec is not None else None


def _require_client_capabilities(spec: ToolSpec | None, declared: types.ClientCapabilities | None) -> None:
    """MCP's refusal (-32021, naming what is missing) of a call to a tool that needs client capabilities the client
    did not declare."""
    if spec is None or not spec.client_capabilities:
        return
    missing = [name for name in spec.client_capabilities if getattr(declared, name, None) is None]
    if missing:
        data = types.MissingRequiredClientCapabilityErrorData(
            required_capabilities=types.ClientCapabilities.model_validate({name: {} for name in missing})
        )
        raise MCPError(
            code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message=f"This tool needs the client capabilities: {', '.join(missing)}",
            data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
        )


async def on_set_logging_level(ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
    """Tools log to the server's own log; accepting the level keeps clients that set it working."""
    return types.EmptyResult()


def _middleware(request_context) -> list:
    """The site's middleware around every request's handler, innermost last."""

    async def state_refused(ctx) -> None:
        call_ctx, _groups = request_context(ctx)
        name = (ctx.params or {}).get("name") if ctx.method == "tools/call" else ctx.method
        await dispatch.arecord_refused_call(call_ctx, name, str(INVALID_PARAMS))

    return [
        # Seals and checks the requestState of multi round-trip calls, bound to the caller (requeststate.py).
        requeststate.CheckedRequestStates(
            lambda ctx: requeststate.principal_of(request_context(ctx)[0]), state_refused
        ),
        ui.AppsAdvertised(request_context),  # MCP Apps, named in initialize where a view is served to this caller
        idempotency.advertised,  # SEP-3182 (a draft): `tools.idempotency` in initialize and server/discover
    ]


def build_server(context_for: ContextFactory, *, subscriptions: bool = False, info: ServerInfo | None = None) -> Server:
    """`subscriptions`: the transport keeps a session to send resource updates to (stdio, stateful HTTP); `info`:
    the `serverInfo` it states (the site's by default; scopes.server_info)."""
    info = info or server_info(None)

    def request_context(ctx) -> tuple[CallContext, list[str] | None]:
        """The transport's context of this request, with the request's protocol revision and whether its client
        negotiated MCP Apps."""
        call_ctx, groups = context_for(ctx)
        return dataclasses.replace(call_ctx, protocol=ctx.protocol_version or "", apps=ui.apps_enabled(ctx)), groups

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        call_ctx, groups = request_context(ctx)
        specs = dispatch.list_tools(call_ctx, groups)
        return types.ListToolsResult(tools=[_tool(spec, apps=call_ctx.apps) for spec in specs])

    async def on_call_tool(
        ctx, params: types.CallToolRequestParams
    ) -> dict[str, Any] | types.CallToolResult | types.InputRequiredResult:
        call_ctx, groups = request_context(ctx)
        spec = registry.get(params.name)
        _require_client_capabilities(spec, ctx.session.client_capabilities)
        call_ctx = idempotency.keyed(call_ctx, params=ctx.params)
        # Confirmation, progress and cancellation for the tool (calls.py); the rest of the call is unchanged.
        call_ctx, interaction = calls.with_session(call_ctx, ctx)
        call_ctx = ui.with_card(call_ctx, spec, params.name, params.arguments)
        call = dispatch.acall_tool(call_ctx, params.name, params.arguments, groups)
        scope = ctx.request.scope if ctx.request is not None else None
        # A plain answer leaves as its wire fields: the SDK validates every result against its revision's schema.
        return await tool_call_result(calls.run_cancellable(call, interaction), spec, call_ctx, scope)

    with warnings.catch_warnings():
        # logging/setLevel is deprecated in 2026-07-28 but 2025-11-25 clients still send it.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = Server(
            info.name,
            version=info.version,
            instructions=INSTRUCTIONS,
            on_list_tools=on_list_tools,
            # Typed for the models; the runner takes a handler's dict as well (docs/upgrades.md).
            on_call_tool=on_call_tool,  # type: ignore[arg-type]
            on_set_logging_level=on_set_logging_level,
            on_subscriptions_listen=features.listen_handler(request_context),
            cache_hints=CACHE_HINTS,
            get_tool_input_schema=tool_input_schema,
            # Resources, prompts and completion (features.py).
            **features.build_handlers(request_context, subscriptions_enabled=subscriptions),
        )
    server.middleware += _middleware(request_context)
    return server
