"""Server handlers for MCP beyond tools: resources (+ templates, subscribe, listen), prompts and completion.

Built from the resource and prompt registries (`<app>/resources.py`, `<app>/prompts.py`), scoped like read-only
tools: an endpoint's groups narrowed to those the API key's scopes let it read. Lists are paginated with an opaque
cursor. Domain functions run in worker threads, as tools do.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import mcp_types as types
from django.conf import settings
from mcp.server.subscriptions import SUBSCRIPTION_ID_META_KEY, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpsite.core import metrics
from mcpsite.core.errors import ApplicationError, InvalidParams, ResourceNotFound, ScopeDenied
from mcpsite.core.scopes import READ

from . import calls, content, dispatch, prompts, resources, shutdown, subscriptions, threads, ui
from .completion import completion_run
from .interaction import InputRequired
from .registry import CallContext
from .wire import INVALID_PARAMS, RESOURCE_NOT_FOUND, jsonrpc_code

ContextFactory = Callable[[Any], tuple[CallContext, list[str] | None]]


def _protocol_error(exc: ApplicationError) -> MCPError:
    return MCPError(code=jsonrpc_code(exc), message=exc.message, data=exc.data)


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o{offset}".encode()).decode()


def page(items: Sequence, cursor: str | None) -> tuple[list, str | None]:
    """One page of `items` from `cursor` (None: the first), and the cursor of the next page (None: no more)."""
    offset = 0
    if cursor is not None:
        try:
            decoded = base64.urlsafe_b64decode(cursor.encode()).decode()
            offset = int(decoded[1:]) if decoded.startswith("o") else -1
        except (binascii.Error, UnicodeError, ValueError):
            offset = -1
        if offset < 0:
            raise MCPError(code=INVALID_PARAMS, message="Invalid cursor", data="Pass a nextCursor from a list result")
    end = offset + settings.MCP_PAGE_SIZE
    return list(items[offset:end]), (_cursor(end) if end < len(items) else None)


def _visible(call_ctx: CallContext, groups: list[str] | None) -> list[str]:
    """The groups whose resources and prompts the caller may use: those its scopes let it read."""
    return dispatch.visible_groups(call_ctx, groups, READ)


def _check_group(group: str, call_ctx: CallContext, groups: list[str] | None, not_found: ApplicationError) -> None:
    """Outside the endpoint's groups a name does not exist; outside the key's scopes it is refused (as tools are)."""
    if groups is not None and group not in groups:
        raise not_found
    if call_ctx.api_key is not None and not call_ctx.api_key.allows(group, READ):
        raise ScopeDenied.for_group(call_ctx.api_key, group, "resources", mode=READ)


def _resource_entries(call_ctx: CallContext, groups: list[str]) -> list[types.Resource]:
    entries = [
        types.Resource(
            uri=s.uri, name=s.name, title=s.title, description=s.description, mime_type=s.mime_type, _meta=s.meta
        )
        for s in resources.resources(groups)
        if call_ctx.apps or not s.apps_only
    ]
    for spec in resources.templates(groups):
        if spec.instances is not None:
            meta = ui.template_meta(spec, call_ctx)
            entries += [
                types.Resource(
                    uri=i.uri,
                    name=i.name,
                    title=i.title,
                    description=spec.description,
                    mime_type=spec.mime_type,
                    _meta=meta,
                )
                for i in spec.instances(call_ctx)
            ]
    return entries


def _find_resource(uri: str, call_ctx: CallContext, groups: list[str] | None):
    """(spec, variables) of the resource at `uri` that this caller may read; ResourceNotFound or ScopeDenied."""
    found = resources.find(uri)
    if found is None:
        raise ResourceNotFound(data={"uri": uri})
    _check_group(found[0].group, call_ctx, groups, ResourceNotFound(data={"uri": uri}))
    return found


def _read(
    uri: str, call_ctx: CallContext, groups: list[str] | None
) -> tuple[resources.ResourceSpec | resources.TemplateSpec, str | bytes]:
    """(spec, text or bytes) of the resource at `uri`, audited as a tool call is, in the same frame (tool
    `resources/read <name>`, or `resources/read` for a URI that names none): a read can hold what a tool would
    return (a balance sheet, a seat map), so staff see who read what, when, and how it ended."""
    found = resources.find(uri)
    with dispatch.audited(call_ctx, f"resources/read {found[0].name}" if found else "resources/read") as frame:
        frame.group, frame.mode = (found[0].group, READ) if found else ("", "")
        spec, variables = _find_resource(uri, call_ctx, groups)
        if isinstance(spec, resources.TemplateSpec):
            return spec, spec.read(variables, call_ctx)
        return spec, spec.read(call_ctx)


async def _aread(uri: str, call_ctx: CallContext, groups: list[str] | None):
    """`_read` in a worker thread, its refusal as the protocol's error."""
    try:
        return await threads.in_worker_thread(_read)(uri, call_ctx, groups)
    except ApplicationError as exc:
        raise _protocol_error(exc) from None


def _announceable(uris: Sequence[str], call_ctx: CallContext, groups: list[str] | None) -> list[str]:
    """The URIs of `uris` whose updates this caller may hear: resources that send updates and that it may read, with
    the checks of resources/read (groups, scopes, owners: each is read once, audited as a read). The others are
    dropped, not refused: the listen acknowledgment names what the stream will carry, so the client sees what was
    left out, and a stream can still carry the rest."""
    announceable = []
    for uri in dict.fromkeys(uris):
        try:
            spec, _variables = _find_resource(uri, call_ctx, groups)
            if getattr(spec, "subscribable", False):
                _read(uri, call_ctx, groups)
                announceable.append(uri)
        except ApplicationError:
            continue
    return announceable


def listen_handler(context_for: ContextFactory) -> Any:
    """`subscriptions/listen` (2026-07-28): the SDK's `ListenHandler` over the site's cross-process bus, with the
    requested resources narrowed to what the caller may read (`_announceable`), at most MCP_LISTEN_MAX_URIS of them,
    and each stream closed gracefully after MCP_LISTEN_MAX_SECONDS (the client re-listens). The per-key cap on open
    streams is the HTTP app's (http.py), which can still answer 429."""
    sdk_handler = ListenHandler(
        subscriptions.bus,
        max_subscriptions=settings.MCP_LISTEN_MAX_STREAMS,
        max_buffered_events=settings.MCP_LISTEN_MAX_BUFFERED_EVENTS,
    )
    # Events missed while the channel reconnected: end the streams, their clients re-listen and re-read.
    subscriptions.bus.on_gap(sdk_handler.close)

    async def on_subscriptions_listen(
        ctx, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        call_ctx, groups = context_for(ctx)
        requested = params.notifications
        uris = list(requested.resource_subscriptions or ())
        if len(uris) > settings.MCP_LISTEN_MAX_URIS:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"At most {settings.MCP_LISTEN_MAX_URIS} resource subscriptions per listen stream",
            )
        # Listening before reading: a change committed after the read is heard.
        await threads.in_worker_thread(subscriptions.listener.ensure_started)()
        if uris:
            uris = await threads.in_worker_thread(_announceable)(uris, call_ctx, groups)
        notifications = requested.model_copy(update={"resource_subscriptions": uris or None})
        metrics.LISTEN_STREAMS.inc()
        try:
            # Ended gracefully at the end of its lifetime, or at once when the server is told to stop.
            with anyio.move_on_after(settings.MCP_LISTEN_MAX_SECONDS) as lifetime, shutdown.ending_on_stop(lifetime):
                return await sdk_handler(ctx, params.model_copy(update={"notifications": notifications}))
        finally:
            metrics.LISTEN_STREAMS.dec()
        return types.SubscriptionsListenResult(_meta={SUBSCRIPTION_ID_META_KEY: ctx.request_id})

    return on_subscriptions_listen


def _prompt(name: str, call_ctx: CallContext, groups: list[str] | None) -> prompts.PromptSpec:
    not_found = InvalidParams(f"Unknown prompt: {name}")
    spec = prompts.get(name)
    if spec is None:
        raise _protocol_error(not_found)
    try:
        _check_group(spec.group, call_ctx, groups, not_found)
    except ApplicationError as exc:
        raise _protocol_error(exc) from None
    return spec


def _completer(ref, argument: str, call_ctx: CallContext, groups: list[str] | None):
    """The argument's completer; None (nothing to suggest) for what this caller cannot see or that has none.
    Never an error: clients ask while the user types, and the conformance suite asks about its own prompts."""
    visible = _visible(call_ctx, groups)
    if isinstance(ref, types.PromptReference):
        spec = prompts.get(ref.name)
        declared = spec.argument(argument) if spec is not None and spec.group in visible else None
        return declared.complete if declared else None
    template = resources.template(ref.uri)
    return template.complete.get(argument) if template is not None and template.group in visible else None


class FeatureHandlers:
    """The server's handlers for resources, prompts and completion, for one transport's `context_for` (who calls, and
    the endpoint's groups)."""

    def __init__(self, context_for: ContextFactory) -> None:
        self.context_for = context_for

    async def on_list_resources(self, ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        call_ctx, groups = self.context_for(ctx)
        entries = await threads.in_worker_thread(_resource_entries)(call_ctx, _visible(call_ctx, groups))
        items, next_cursor = page(entries, params.cursor if params else None)
        return types.ListResourcesResult(resources=items, next_cursor=next_cursor)

    async def on_list_resource_templates(
        self, ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        call_ctx, groups = self.context_for(ctx)
        entries = [
            types.ResourceTemplate(
                uri_template=s.uri_template,
                name=s.name,
                title=s.title,
                description=s.description,
                mime_type=s.mime_type,
                _meta=ui.template_meta(s, call_ctx),
            )
            for s in resources.templates(_visible(call_ctx, groups))
        ]
        items, next_cursor = page(entries, params.cursor if params else None)
        return types.ListResourceTemplatesResult(resource_templates=items, next_cursor=next_cursor)

    async def on_read_resource(self, ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        call_ctx, groups = self.context_for(ctx)
        try:
            spec, body = await _aread(params.uri, call_ctx, groups)
        except MCPError as exc:
            if exc.error.code == RESOURCE_NOT_FOUND and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                raise MCPError(code=INVALID_PARAMS, message=exc.error.message, data=exc.error.data) from None
            raise
        contents = content.resource_contents(params.uri, spec.mime_type, body)
        result: dict[str, Any] = {"contents": [contents]}
        if isinstance(spec, resources.ResourceSpec):
            if spec.meta is not None:  # an MCP Apps view's CSP: hosts read it from the contents
                contents["_meta"] = spec.meta
            if spec.cache_ttl_ms is not None:
                result.update(ttlMs=spec.cache_ttl_ms, cacheScope="private")
        return types.ReadResourceResult.model_validate(result)

    async def on_subscribe_resource(self, ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        call_ctx, groups = self.context_for(ctx)
        try:
            spec, _variables = _find_resource(params.uri, call_ctx, groups)
        except ApplicationError as exc:
            raise _protocol_error(exc) from None
        if not spec.subscribable:
            raise MCPError(code=INVALID_PARAMS, message="This resource does not send updates", data={"uri": params.uri})
        # Refuse a subscription to what does not exist (an unknown show): read it once (audited as a read).
        await _aread(params.uri, call_ctx, groups)
        await threads.in_worker_thread(subscriptions.listener.ensure_started)()
        # One ServerSession is built per request; the connection behind it is the session's (private in mcp 2.3).
        connection = ctx.session._connection
        if subscriptions.hub.subscribe(params.uri, id(connection), ctx.session, asyncio.get_running_loop()):
            # The session's end (DELETE, idle timeout, stdio EOF) ends its subscriptions.
            connection.exit_stack.callback(subscriptions.hub.unsubscribe, params.uri, id(connection))
        return types.EmptyResult()

    async def on_unsubscribe_resource(self, ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        subscriptions.hub.unsubscribe(params.uri, id(ctx.session._connection))
        return types.EmptyResult()

    async def on_list_prompts(self, ctx, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        call_ctx, groups = self.context_for(ctx)
        entries = [
            types.Prompt(
                name=s.name,
                title=s.title,
                description=s.description,
                arguments=[
                    types.PromptArgument(name=a.name, description=a.description, required=a.required)
                    for a in s.arguments
                ],
            )
            for s in prompts.prompts(_visible(call_ctx, groups))
        ]
        items, next_cursor = page(entries, params.cursor if params else None)
        return types.ListPromptsResult(prompts=items, next_cursor=next_cursor)

    async def on_get_prompt(
        self, ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        call_ctx, groups = self.context_for(ctx)
        spec = _prompt(params.name, call_ctx, groups)
        arguments = {k: v for k, v in (params.arguments or {}).items() if v is not None}
        unknown = sorted(set(arguments) - {a.name for a in spec.arguments})
        missing = [a.name for a in spec.arguments if a.required and not str(arguments.get(a.name, "")).strip()]
        if unknown or missing:
            problems = ([f"missing required argument(s): {', '.join(missing)}"] if missing else []) + (
                [f"unknown argument(s): {', '.join(unknown)}"] if unknown else []
            )
            raise MCPError(code=INVALID_PARAMS, message=f"Prompt {spec.name}: {'; '.join(problems)}")
        values = {k: str(v).strip() for k, v in arguments.items()}
        try:
            if spec.with_context:  # the prompt may ask the client first (multi round-trip on 2026-07-28)
                rendered = spec.render(values, calls.with_session(call_ctx, ctx)[0])
            else:
                rendered = spec.render(values)
        except InputRequired as asked:
            return calls.input_required_result(asked)
        except ApplicationError as exc:  # an argument the prompt cannot use (a month that is not YYYY-MM)
            raise _protocol_error(exc) from None
        blocks = [content.text(rendered)] if isinstance(rendered, str) else rendered
        messages = [types.PromptMessage.model_validate({"role": "user", "content": block}) for block in blocks]
        return types.GetPromptResult(description=spec.description, messages=messages)

    async def on_completion(self, ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        call_ctx, groups = self.context_for(ctx)
        argument = params.argument
        completer = _completer(params.ref, argument.name, call_ctx, groups)
        context = dict(params.context.arguments or {}) if params.context else {}
        result = await threads.in_worker_thread(completion_run)(completer, argument.value, context, call_ctx)
        return types.CompleteResult(
            completion=types.Completion(values=result.values, total=result.total, has_more=result.has_more)
        )


def build_handlers(context_for: ContextFactory, *, subscriptions_enabled: bool) -> dict[str, Any]:
    """The `Server(...)` keyword arguments for resources, prompts and completion. `subscriptions_enabled` only where
    the transport keeps a session to notify (stdio, stateful HTTP): the capability then says subscribe=true."""
    handlers = FeatureHandlers(context_for)
    names = [
        "on_list_resources",
        "on_list_resource_templates",
        "on_read_resource",
        "on_list_prompts",
        "on_get_prompt",
        "on_completion",
    ]
    if subscriptions_enabled:
        names += ["on_subscribe_resource", "on_unsubscribe_resource"]
    return {name: getattr(handlers, name) for name in names}
