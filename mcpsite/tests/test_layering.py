"""The import contract (pyproject.toml, `lint-imports` in `make test`) covers every app that serves tools."""

from __future__ import annotations

from . import app_lists

ROOT = app_lists.ROOT


def test_pyproject_names_every_tool_app_wherever_it_names_one():
    """The import contracts, mypy's files and pytest's testpaths in pyproject.toml name each tool app
    (docs/add-an-app.md, step 4); a new app's missing entries are listed here, ready to paste."""
    known = app_lists.tool_apps()
    assert len(known) >= 5
    missing = app_lists.missing_entries(app_lists.pyproject(), known)
    assert missing == [], "pyproject.toml: add the app to these lists:\n" + "\n".join(missing)


def test_the_app_lists_check_names_what_a_new_app_lacks():
    """Control: pyproject.toml as it is lacks a sixth app's entries in every list that names the apps, among them
    the import contracts', mypy's and pytest's; with them added, nothing is missing."""
    known = app_lists.tool_apps()
    config = app_lists.pyproject()
    missing = app_lists.missing_entries(config, [*known, "parking"])
    assert len(missing) >= 7
    for where in ("importlinter.root_packages", "testpaths", "mypy.files", "['The platform names no app", "containers"):
        assert any(where in line for line in missing), where
    assert any("'mcpsite.tests.** -> parking.**'" in line for line in missing)
    assert not any("parking.meili" in line for line in missing)
    assert app_lists.missing_entries(app_lists.with_app(config, "parking", known), [*known, "parking"]) == []


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
