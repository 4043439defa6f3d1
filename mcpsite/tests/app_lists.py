"""pyproject.toml's lists that name the tool apps (the import contracts, mypy's and pytest's paths), read as
patterns: every entry that names one tool app ("cinema", "mcpsite.tests.** -> cinema.**") stands for the same entry
for each of them. What a new app adds to pyproject.toml is exactly what these patterns give for its name."""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.apps import apps

ROOT = Path(__file__).resolve().parents[2]


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def tool_apps() -> list[str]:
    """The installed apps that serve tools (their AppConfig declares `mcp_tool_group`), in INSTALLED_APPS order."""
    return [config.name for config in apps.get_app_configs() if getattr(config, "mcp_tool_group", None)]


def _names(app: str) -> re.Pattern[str]:
    # The app as a whole package: "cinema", "cinema.**", "-> cinema"; not "mcpsite_cinema", "x.cinema" or one
    # module of it ("merchant.meili", a contract of merchant's own).
    return re.compile(rf"(?<![\w.]){re.escape(app)}(?=$|\s|\.\*)")


def string_lists(node: Any, where: str = "") -> Iterator[tuple[str, list[str]]]:
    """Every list of strings in the parsed TOML, with its dotted key (a contract by its name)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from string_lists(value, f"{where}.{key}" if where else key)
    elif isinstance(node, list):
        if node and all(isinstance(item, str) for item in node):
            yield where, node
            return
        for index, item in enumerate(node):
            label = item.get("name", index) if isinstance(item, dict) else index
            yield from string_lists(item, f"{where}[{label!r}]")


def entries_for(entries: list[str], app: str, known: list[str]) -> list[str]:
    """The entries `app` needs in a list whose entries name the `known` tool apps (none if the list names none)."""
    wanted: list[str] = []
    for entry in entries:
        for other in known:
            if _names(other).search(entry):
                new = _names(other).sub(app, entry)
                if new not in wanted:
                    wanted.append(new)
    return wanted


def missing_entries(config: dict[str, Any], known: list[str]) -> list[str]:
    """For each list that names a tool app, what it lacks to name every one of them."""
    missing = []
    for where, entries in string_lists(config):
        for app in known:
            absent = [entry for entry in entries_for(entries, app, known) if entry not in entries]
            if absent:
                missing.append(f"{where}: add {absent}")
    return missing


def with_app(config: dict[str, Any], app: str, known: list[str]) -> dict[str, Any]:
    """A copy of the parsed pyproject.toml with `app` added to every list that names the `known` tool apps."""
    config = copy.deepcopy(config)
    for _where, entries in string_lists(config):
        entries.extend(entry for entry in entries_for(entries, app, known) if entry not in entries)
    return config
