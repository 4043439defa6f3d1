"""Tool groups and the scopes over them, declared by the apps themselves, so adding an app touches no platform file.

A scope is `<group>:read` (the group's read-only tools, its resources and prompts), `<group>:write` (its writing
tools) or the bare `<group>` (both). An API key's scopes, an OAuth grant's and a staff member's choice are all read
here, and nowhere else.

An app's AppConfig says `mcp_tool_group = "cinema"` (the group of the tools it registers) and
`mcp_scope_permissions = (...)` (the admin permissions a staff member needs to give a key that scope: what the
group's tools do, said in the admin's terms). An app whose seed names its MCP server says so too,
`mcp_server_info = ("merchant_agent_mcp", "1.0.0")` (name, version): its single-group endpoints answer with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from django.apps import AppConfig, apps
from django.conf import settings

# A tool's mode: `readOnlyHint` tools read, every other tool writes. Resources and prompts read.
READ = "read"
WRITE = "write"
MODES = (READ, WRITE)

# The version the site's own serverInfo states (an endpoint serving several groups, or one whose seed names none).
SITE_SERVER_VERSION = "1.0.0"


class ServerInfo(NamedTuple):
    """An MCP endpoint's `serverInfo`."""

    name: str
    version: str


def _tool_apps() -> list[AppConfig]:
    return [config for config in apps.get_app_configs() if getattr(config, "mcp_tool_group", None)]


def tool_groups() -> tuple[str, ...]:
    """Every tool group, in INSTALLED_APPS order."""
    return tuple(config.mcp_tool_group for config in _tool_apps())  # type: ignore[attr-defined]


def tool_group_validate(group: str) -> None:
    """ValueError unless an app declares `group`: a tool, resource or prompt under a typo fails at start-up."""
    known = tool_groups()
    if group not in known:
        raise ValueError(f"Unknown tool group {group!r}; expected one of {known}")


def module_tool_group(module: str) -> str:
    """The tool group of the app whose package holds `module` (its AppConfig's `mcp_tool_group`): what a tool,
    resource or prompt defined there belongs to. ValueError when no installed app holds it or that app declares none."""
    config = apps.get_containing_app_config(module)
    group = getattr(config, "mcp_tool_group", None)
    if not group:
        where = f"app {config.label!r}, which declares no mcp_tool_group" if config else "no installed app"
        raise ValueError(f"{module} is in {where}: a tool belongs to an app that declares one (docs/add-an-app.md)")
    return group


def scope_permissions() -> dict[str, tuple[str, ...]]:
    """Each group's admin permissions needed to grant it."""
    return {config.mcp_tool_group: tuple(config.mcp_scope_permissions) for config in _tool_apps()}  # type: ignore[attr-defined]


def server_info(groups: Sequence[str] | None) -> ServerInfo:
    """The `serverInfo` of an endpoint serving `groups` (None: every group): one group's own where its app declares
    `mcp_server_info` (its seed names the server), else the site's (settings.MCP_SERVER_NAME)."""
    if groups is not None and len(groups) == 1:
        for config in _tool_apps():
            if config.mcp_tool_group == groups[0] and getattr(config, "mcp_server_info", None):  # type: ignore[attr-defined]
                return ServerInfo(*config.mcp_server_info)  # type: ignore[attr-defined]
    return ServerInfo(settings.MCP_SERVER_NAME, SITE_SERVER_VERSION)


def tool_mode(annotations: dict[str, Any]) -> str:
    """A tool's mode from its MCP annotations: READ only when it states `readOnlyHint: true` (MCP's default is
    not read-only, so an unannotated tool writes)."""
    return READ if annotations.get("readOnlyHint") is True else WRITE


def scope_name(group: str, mode: str | None = None) -> str:
    """The scope of `group` in `mode` (None: the bare group, both modes)."""
    return group if mode is None else f"{group}:{mode}"


def all_scopes() -> tuple[str, ...]:
    """Every scope: each group bare, then its read and its write scope, in INSTALLED_APPS order."""
    return tuple(scope_name(group, mode) for group in tool_groups() for mode in (None, *MODES))


def scope_group(scope: str) -> str:
    """The tool group a scope is of (`ledger:read` -> `ledger`)."""
    return scope.partition(":")[0]


def scopes_validate(scopes: Iterable[str]) -> list[str]:
    """`scopes` without repeats, in `all_scopes()` order; ValueError naming the unknown ones."""
    known = all_scopes()
    wanted = set(scopes)
    if unknown := sorted(wanted - set(known)):
        raise ValueError(f"Unknown scope(s): {', '.join(unknown)}. Choose from: {', '.join(known)}")
    return [scope for scope in known if scope in wanted]


def scopes_allow(scopes: Iterable[str], group: str, mode: str | None = None) -> bool:
    """Whether `scopes` let their holder use `group`'s tools of `mode` (None: any of the group's tools)."""
    held = set(scopes)
    if group in held:
        return True
    return any(scope_name(group, m) in held for m in (MODES if mode is None else (mode,)))


def scope_needed(scopes: Iterable[str], group: str, mode: str) -> str:
    """The scope that allowed `group`'s `mode` to `scopes` (the bare group before the moded one), or the one that
    would have: what the audit records and a refusal names."""
    held = set(scopes)
    return group if group in held else scope_name(group, mode)


def scopes_expand(scopes: Iterable[str]) -> list[str]:
    """`scopes` with each bare group written as its read and its write scope (`ledger` -> `ledger:read`,
    `ledger:write`): the form a person chooses from, one box per group and mode."""
    return [scope_name(g, m) for g in tool_groups() for m in MODES if scopes_allow(scopes, g, m)]


def scopes_compact(scopes: Iterable[str]) -> list[str]:
    """`scopes` in their shortest form: a group held in both modes as the bare group (what every key and grant
    held before scopes had modes), else its moded scopes."""
    compact = []
    for group in tool_groups():
        modes = [m for m in MODES if scopes_allow(scopes, group, m)]
        compact += [group] if len(modes) == len(MODES) else [scope_name(group, m) for m in modes]
    return compact


def scopes_cover(held: Iterable[str], wanted: Iterable[str]) -> bool:
    """Whether `held` allows everything `wanted` does."""
    return set(scopes_expand(wanted)) <= set(scopes_expand(held))
