"""The import contract (pyproject.toml, `lint-imports` in `make test`) covers every app that serves tools."""

from __future__ import annotations

import tomllib
from pathlib import Path

from django.apps import apps

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contract_names_every_tool_app():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    transport_contract = next(c for c in config["contracts"] if c["forbidden_modules"] == ["mcpsite.mcp"])
    tool_apps = [c.name for c in apps.get_app_configs() if getattr(c, "mcp_tool_group", None)]
    assert tool_apps
    for app in tool_apps:
        assert app in config["root_packages"], f"add {app} to [tool.importlinter] root_packages"
        assert app in transport_contract["source_modules"], f"add {app} to the contract's source_modules"


def test_selectors_only_read():
    """A selector neither locks rows (select_for_update belongs to a service's transaction) nor calls another
    service over the network."""
    offenders = []
    for path in sorted(ROOT.glob("*/selectors.py")):
        text = path.read_text()
        for needle in ("select_for_update", "import requests", "import httpx", "urllib.request", "galuchat"):
            if needle in text:
                offenders.append(f"{path.relative_to(ROOT)}: {needle}")
    assert offenders == []
