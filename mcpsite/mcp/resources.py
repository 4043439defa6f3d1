"""The resource registry: each app declares its read-only context once, in `<app>/resources.py`.

A resource has a fixed URI (`@resource`); a resource template (`@resource_template`) has an RFC 6570 URI template
whose variables are filled by the client, optionally completed from live data, and whose instances may be listed
in resources/list. Both belong to a tool group, so an API key sees exactly the resources of the groups whose tools
it may use. Read functions are plain synchronous functions that call the app's selectors and return text (or bytes,
sent base64 as a blob, for a binary resource).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mcp.shared.uri_template import UriTemplate

from mcpsite.core.scopes import module_tool_group, tool_group_validate

from .completion import Completer
from .registry import CallContext

JSON = "application/json"


@dataclass(frozen=True)
class ResourceSpec:
    uri: str
    name: str
    group: str
    description: str
    read: Callable[[CallContext], str | bytes]
    mime_type: str = JSON
    title: str | None = None
    # resources/subscribe is accepted for this URI (the app publishes its updates).
    subscribable: bool = False
    # `_meta` of the resource's list entry and contents (an MCP Apps view's `ui`: CSP, border).
    meta: dict[str, Any] | None = None
    # Listed only to clients that negotiated MCP Apps (its views); read by anyone the groups allow.
    apps_only: bool = False
    # resources/read's cache hint (ttlMs, scope private) for contents that change only with a deploy.
    cache_ttl_ms: int | None = None


@dataclass(frozen=True)
class Instance:
    """One concrete URI of a template, as resources/list shows it."""

    uri: str
    name: str
    title: str | None = None


@dataclass(frozen=True)
class TemplateSpec:
    uri_template: str
    name: str
    group: str
    description: str
    read: Callable[[dict[str, str], CallContext], str | bytes]
    mime_type: str = JSON
    title: str | None = None
    complete: dict[str, Completer] = field(default_factory=dict)
    # The concrete resources worth listing (e.g. the seat maps of shows still to come); None lists none.
    instances: Callable[[CallContext], Iterable[Instance]] | None = None
    # resources/subscribe is accepted for URIs of this template (the app publishes their updates).
    subscribable: bool = False
    # The MCP Apps view (`ui://`) that shows these resources, for clients that negotiated Apps.
    ui: str | None = None

    @functools.cached_property
    def template(self) -> UriTemplate:
        return UriTemplate.parse(self.uri_template)

    def match(self, uri: str) -> dict[str, str] | None:
        found = self.template.match(uri)
        if found is None or any(not isinstance(v, str) or not v for v in found.values()):
            return None
        return found  # type: ignore[return-value]


_resources: dict[str, ResourceSpec] = {}
_templates: dict[str, TemplateSpec] = {}


def resource(
    *,
    uri: str,
    name: str,
    group: str | None = None,
    description: str,
    mime_type: str = JSON,
    title: str | None = None,
    subscribable: bool = False,
    meta: dict[str, Any] | None = None,
    apps_only: bool = False,
    cache_ttl_ms: int | None = None,
):
    """Register the decorated `read(ctx) -> str | bytes` as the resource at `uri`."""

    def decorator(func):
        belongs_to = group or module_tool_group(func.__module__)
        tool_group_validate(belongs_to)
        _resources[uri] = ResourceSpec(
            uri, name, belongs_to, description, func, mime_type, title, subscribable, meta, apps_only, cache_ttl_ms
        )
        return func

    return decorator


def resource_template(
    *,
    uri_template: str,
    name: str,
    group: str | None = None,
    description: str,
    mime_type: str = JSON,
    title: str | None = None,
    complete: dict[str, Completer] | None = None,
    instances: Callable[[CallContext], Iterable[Instance]] | None = None,
    subscribable: bool = False,
    ui: str | None = None,
):
    """Register the decorated `read(variables, ctx) -> str | bytes` as the resources matching `uri_template`."""

    def decorator(func):
        belongs_to = group or module_tool_group(func.__module__)
        tool_group_validate(belongs_to)
        spec = TemplateSpec(
            uri_template,
            name,
            belongs_to,
            description,
            func,
            mime_type,
            title,
            complete or {},
            instances,
            subscribable,
            ui,
        )
        unknown = set(spec.complete) - set(spec.template.variable_names)
        if unknown:
            raise ValueError(f"{uri_template}: completers for unknown variables {sorted(unknown)}")
        _templates[uri_template] = spec
        return func

    return decorator


def resources(groups: Iterable[str]) -> list[ResourceSpec]:
    return [spec for spec in _resources.values() if spec.group in set(groups)]


def templates(groups: Iterable[str]) -> list[TemplateSpec]:
    return [spec for spec in _templates.values() if spec.group in set(groups)]


def template(uri_template: str) -> TemplateSpec | None:
    return _templates.get(uri_template)


def find(uri: str) -> tuple[ResourceSpec | TemplateSpec, dict[str, str]] | None:
    """The resource or template serving `uri` (whatever the caller's groups), with the template's variables."""
    if uri in _resources:
        return _resources[uri], {}
    for spec in _templates.values():
        variables = spec.match(uri)
        if variables is not None:
            return spec, variables
    return None
