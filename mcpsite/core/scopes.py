"""Tool groups (= API-key scopes), declared by the apps themselves, so adding an app touches no platform file.

An app's AppConfig says `mcp_tool_group = "cinema"` (the group of the tools it registers) and
`mcp_scope_permissions = (...)` (the admin permissions a staff member needs to give a key that scope: what the
group's tools do, said in the admin's terms).
"""

from __future__ import annotations

from django.apps import AppConfig, apps


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


def scope_permissions() -> dict[str, tuple[str, ...]]:
    """Each group's admin permissions needed to grant it."""
    return {config.mcp_tool_group: tuple(config.mcp_scope_permissions) for config in _tool_apps()}  # type: ignore[attr-defined]
