"""The tool registry: each app declares its tools once; every transport is built from here.

An app declares its tool group in its AppConfig (`mcp_tool_group = "cinema"`); its `tools.py` decorates plain
synchronous functions with `@tool(...)`, each taking the group of the app that defines it, and the app's
`AppConfig.ready()` imports that module. So adding an app touches no platform file. A tool function takes the
validated arguments and the call context and returns a JSON-able dict (the seed's result), or `content.Content` when
its answer is images, audio or documents rather than one JSON object; it raises `ApplicationError`s for failures.
"""

from __future__ import annotations

import base64
import functools
import html
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings
from jsonschema import Draft202012Validator

from mcpsite.core.scopes import module_tool_group, tool_group_validate, tool_groups, tool_mode

from .content import Content
from .context import CallContext, ToolResult
from .schema import ArgumentValidator, StrictIntegerValidator

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

    from mcpsite.core.errors import ApplicationError


# MCP annotations of a tool that only reads this site's own database. MCP's defaults are the cautious
# ones (not read-only, destructive, open world), so every tool states all four hints it can.
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}

# Told to the model in every writing tool's description (ToolSpec.writes; docs/idempotency.md).
RETRY_NOTE = (
    " 再試行するときは同じ冪等キーを付けてください。A retry of this call should repeat its idempotency key "
    "(Idempotency-Key header, or idempotencyKey), so that it is done once."
)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    group: str
    description: str
    input_schema: dict[str, Any]
    func: Callable[[dict[str, Any], CallContext], dict[str, Any] | Content]
    output_schema: dict[str, Any] | None = None
    # For seeds with an in-band error shape (geo, reminders): ApplicationError -> the seed's result dict.
    render_error: Callable[[ApplicationError], dict[str, Any]] | None = None
    # What hosts show in their tool pickers (SEP-973): a title in the site's language (a lazy translation, read when
    # listed) and an icon, one emoji drawn as an SVG (`icon_uri`).
    title: str | StrPromise | None = None
    icon: str | None = None
    annotations: dict[str, Any] = field(default_factory=dict)
    # Waits on another service (GaluchatAPI): runs in its own thread pool (dispatch.acall_tool).
    upstream: bool = False
    # Acts irreversibly on someone's behalf outside this site (annotations destructive and open-world, both stated):
    # the tool asks `ctx.interaction.confirm(...)` whenever the client can answer (the dispatcher refuses to finish
    # a call that could have asked and did not), and stores `ctx.interaction.confirmation_key` unique with its write.
    confirm: bool = False
    # Writes: a call accepts an idempotency key, and a retry with the same key replays the first outcome instead of
    # writing again (idempotency.py; docs/idempotency.md).
    writes: bool = False
    # MCP client capabilities the tool cannot run without ("sampling", "elicitation", "roots"): an MCP client that
    # did not declare them is refused before the tool runs (-32021, server.py).
    client_capabilities: tuple[str, ...] = ()
    # MCP Apps (ui.py): the `ui://` view a host renders for this tool's results; `app_only` tools are called by
    # views only (`_meta.ui.visibility: ["app"]`) and exist only for clients that negotiated Apps.
    ui: str | None = None
    app_only: bool = False
    # For clients with Apps: extra `_meta` for a successful result, for the view only (the show a seat map is of).
    ui_meta: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    # The largest request this tool can legitimately receive, in bytes, where it exceeds MCP_MAX_BODY_BYTES: every
    # endpoint serving the tool accepts bodies (and WebSocket frames) this large (mcpsite.guard.body_limit).
    max_request_bytes: Callable[[], int] | None = None

    @property
    def mode(self) -> str:
        """READ or WRITE, as its annotations say (`mcpsite.core.scopes.tool_mode`): the scope a call needs."""
        return tool_mode(self.annotations)

    @functools.cached_property
    def validator(self) -> Draft202012Validator:
        return ArgumentValidator(self.input_schema)

    @functools.cached_property
    def strict_validator(self) -> Draft202012Validator:
        """Finds integral floats (5.0) in valid arguments: the dispatcher hands them to the tool as `int`."""
        return StrictIntegerValidator(self.input_schema)

    def describe(self) -> dict[str, Any]:
        """The tools/list entry, in MCP's camelCase."""
        description = self.description + RETRY_NOTE if self.writes else self.description
        entry: dict[str, Any] = {"name": self.name, "description": description, "inputSchema": self.input_schema}
        if self.title:
            entry["title"] = str(self.title)
        if self.icon:
            entry["icons"] = [{"src": icon_uri(self.icon), "mimeType": "image/svg+xml", "sizes": ["any"]}]
        if self.output_schema:
            entry["outputSchema"] = self.output_schema
        if self.annotations:
            entry["annotations"] = self.annotations
        return entry


_tools: dict[str, ToolSpec] = {}


@functools.cache
def icon_uri(glyph: str) -> str:
    """An emoji as a square SVG `data:` URI (SEP-973 icons: self-contained, so a host fetches nothing; no script)."""
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><text x="32" y="34" font-size="52" '
        f'text-anchor="middle" dominant-baseline="middle">{html.escape(glyph)}</text></svg>'
    )
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def _confirm_validate(spec: ToolSpec) -> None:
    """`confirm` exactly when the annotations state destructive and open-world (a tool stating both that did not
    ask would act on someone's behalf unasked; one asking without them would ask for what is reversible)."""
    hints = spec.annotations
    acts_outside = hints.get("destructiveHint") is True and hints.get("openWorldHint") is True
    if spec.confirm and not acts_outside:
        raise ValueError(f"Tool {spec.name!r} asks for confirmation: annotate it destructive and open-world")
    if acts_outside and not spec.confirm:
        raise ValueError(f"Tool {spec.name!r} is destructive and open-world: declare confirm=True (it must ask first)")


def register(spec: ToolSpec) -> ToolSpec:
    tool_group_validate(spec.group)
    _confirm_validate(spec)
    if spec.writes and spec.annotations.get("readOnlyHint") is True:
        raise ValueError(f"Tool {spec.name!r} writes: it cannot be annotated read-only")
    if spec.app_only and spec.ui is None:
        raise ValueError(f"Tool {spec.name!r} is app-only: name the view that calls it (ui=...)")
    existing = _tools.get(spec.name)
    if existing is not None and existing.func is not spec.func:
        raise ValueError(f"Tool {spec.name!r} is registered twice")
    Draft202012Validator.check_schema(spec.input_schema)
    _tools[spec.name] = spec
    _declared_request_bytes.cache_clear()
    return spec


def tool(
    *,
    name: str,
    description: str,
    input_schema: dict[str, Any],
    output_schema: dict[str, Any] | None = None,
    render_error: Callable[[ApplicationError], dict[str, Any]] | None = None,
    title: str | StrPromise | None = None,
    icon: str | None = None,
    annotations: dict[str, Any] | None = None,
    upstream: bool = False,
    confirm: bool = False,
    writes: bool = False,
    client_capabilities: tuple[str, ...] = (),
    ui: str | None = None,
    app_only: bool = False,
    ui_meta: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None,
    max_request_bytes: Callable[[], int] | None = None,
):
    """Register the decorated function as an MCP tool; the function itself is returned unchanged. Its group is the
    `mcp_tool_group` of the app whose package defines the function."""

    def decorator(func):
        register(
            ToolSpec(
                name=name,
                group=module_tool_group(func.__module__),
                description=description,
                input_schema=input_schema,
                func=func,
                output_schema=output_schema,
                render_error=render_error,
                title=title,
                icon=icon,
                annotations=annotations or {},
                upstream=upstream,
                confirm=confirm,
                writes=writes,
                client_capabilities=client_capabilities,
                ui=ui,
                app_only=app_only,
                ui_meta=ui_meta,
                max_request_bytes=max_request_bytes,
            )
        )
        return func

    return decorator


def get(name: str) -> ToolSpec | None:
    return _tools.get(name)


def tools(groups: Iterable[str] | None = None) -> list[ToolSpec]:
    """Registered tools in a stable order (by group, then registration order)."""
    order = {group: index for index, group in enumerate(tool_groups())}
    wanted = set(order if groups is None else groups)
    return sorted((t for t in _tools.values() if t.group in wanted), key=lambda t: order[t.group])


@functools.cache
def _declared_request_bytes(groups: tuple[str, ...] | None) -> int:
    served = tools(None if groups is None else list(groups))
    return max([0, *(spec.max_request_bytes() for spec in served if spec.max_request_bytes is not None)])


def max_request_bytes(groups: Iterable[str] | None = None) -> int:
    """The largest request an endpoint serving `groups` (None: all) legitimately receives: MCP_MAX_BODY_BYTES, or
    more where a tool it serves declares more (geo's 10,000 points). Every door bounds its bodies and frames by it."""
    declared = _declared_request_bytes(None if groups is None else tuple(groups))
    return max(settings.MCP_MAX_BODY_BYTES, declared)


def unregister(name: str) -> None:
    """For tests that register throwaway tools."""
    _tools.pop(name, None)
    _declared_request_bytes.cache_clear()


@dataclass(slots=True)
class Call:
    """One tool call as it passes the stages: who calls, which tool, its arguments (validated by the `validate`
    stage)."""

    ctx: CallContext
    spec: ToolSpec
    arguments: Any


Stage = Callable[[Call, Callable[[Call], ToolResult]], ToolResult]
