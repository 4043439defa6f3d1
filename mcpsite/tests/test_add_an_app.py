"""docs/add-an-app.md, followed: a throwaway sixth app, `parking`, written to a temporary directory on sys.path the
way the page lays one out (an AppConfig declaring its group, tools over a selector) and added to INSTALLED_APPS.
The registry serves its tool with the group its AppConfig declares, and the import contracts, with the entries
pyproject.toml's lists give for it (app_lists.py), hold it to the layering."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings
from importlinter.cli import lint_imports

from mcpsite.core.scopes import tool_groups
from mcpsite.mcp import registry

from . import app_lists

PARKING = {
    "__init__.py": "",
    "apps.py": """
        from django.apps import AppConfig


        class ParkingConfig(AppConfig):
            name = "parking"
            verbose_name = "Parking"
            mcp_tool_group = "parking"
            mcp_scope_permissions = ()

            def ready(self) -> None:
                from . import tools  # noqa: F401
        """,
    # No models: a sixth app's tables would need migrations, which this test does not exercise.
    "models.py": "",
    "services.py": """
        from . import selectors  # noqa: F401
        """,
    "admin.py": "",
    "selectors.py": """
        def space_free_count(*, on: str) -> int:
            return 7
        """,
    "tools.py": """
        from mcpsite.mcp.registry import READ_ONLY, tool

        from . import selectors


        @tool(
            name="parking_free_spaces",
            annotations=READ_ONLY,
            description="空いている駐車スペースの数",
            input_schema={"type": "object", "properties": {"on": {"type": "string"}}, "required": ["on"]},
        )
        def free_spaces(args, ctx):
            return {"free": selectors.space_free_count(on=args["on"])}
        """,
}
CALL = {"jsonrpc": "2.0", "method": "parking_free_spaces", "params": {"on": "2026-12-01"}, "id": 1}


@pytest.fixture
def parking(tmp_path, monkeypatch):
    """The `parking` package on sys.path; afterwards its modules and its tool are gone."""
    package = tmp_path / "apps" / "parking"
    package.mkdir(parents=True)
    for name, text in PARKING.items():
        (package / name).write_text(textwrap.dedent(text).lstrip())
    monkeypatch.syspath_prepend(str(package.parent))
    yield package
    registry.unregister("parking_free_spaces")
    for module in [name for name in sys.modules if name == "parking" or name.startswith("parking.")]:
        del sys.modules[module]


@pytest.mark.django_db
def test_one_line_of_installed_apps_serves_a_sixth_apps_tools(parking, make_api_key, http_post):
    with override_settings(INSTALLED_APPS=[*settings.INSTALLED_APPS, "parking"]):
        assert tool_groups()[-1] == "parking"
        assert registry.get("parking_free_spaces").group == "parking"
        _key, raw = make_api_key(scopes=["parking"])
        assert http_post("/rpc", CALL, raw_key=raw).json()["result"] == {"free": 7}
        # A key without the new scope does not reach the tool.
        _key, cinema_only = make_api_key(scopes=["cinema"])
        assert http_post("/rpc", CALL, raw_key=cinema_only).json()["error"]["code"] == 403
    assert registry.get("parking_free_spaces") is not None  # registered once, kept until the fixture ends
    assert "parking" not in tool_groups()


def _toml(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else json.dumps(value, ensure_ascii=False)


def _lint(config: dict[str, Any], directory: Path) -> int:
    """`lint-imports` on pyproject.toml's [tool.importlinter] as `config` has it."""
    section = config["tool"]["importlinter"]
    tables = [("[tool.importlinter]", {k: v for k, v in section.items() if k != "contracts"})]
    tables += [("[[tool.importlinter.contracts]]", contract) for contract in section["contracts"]]
    lines = []
    for header, table in tables:
        lines += ["", header, *(f"{key} = {_toml(value)}" for key, value in table.items())]
    path = directory / "importlinter.toml"
    path.write_text("\n".join(lines) + "\n")
    return lint_imports(config_filename=str(path), cache_dir=str(directory / "cache"), no_logo=True)


def test_the_import_contracts_hold_a_sixth_app_to_the_layering(parking, tmp_path):
    known = app_lists.tool_apps()
    config = app_lists.with_app(app_lists.pyproject(), "parking", known)
    assert _lint(config, tmp_path) == 0
    # A selector that imports the transport breaks "Only an app's MCP surface imports mcpsite.mcp" and the layers.
    (parking / "selectors.py").write_text("from mcpsite.mcp import registry  # noqa: F401\n" + PARKING["selectors.py"])
    assert _lint(config, tmp_path) == 1
    # Control: pyproject.toml without the app's entries does not look at it (test_layering lists what to add).
    assert _lint(app_lists.pyproject(), tmp_path) == 0
