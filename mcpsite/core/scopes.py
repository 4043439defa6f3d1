"""Tool groups (= API-key scopes), declared by the apps themselves, so adding an app touches no platform file.

An app's AppConfig says `mcp_tool_group = "cinema"` (the group of the tools it registers) and
`mcp_scope_permissions = (...)` (the admin permissions a staff member needs to give a key that scope: what the
group's tools do, said in the admin's terms). An app whose seed names its MCP server says so too,
`mcp_server_info = ("merchant_agent_mcp", "1.0.0")` (name, version): its single-group endpoints answer with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from django.apps import AppConfig, apps
from django.conf import settings

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
