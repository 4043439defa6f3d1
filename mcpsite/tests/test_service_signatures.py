"""Public services and selectors are keyword-only and fully annotated (docs/conventions.md), so a call reads as
`reservation_cancel(reservation=…, source=…, actor=…)` and mypy checks what crosses the layer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(
    p.relative_to(ROOT).as_posix()
    for pattern in ("*/services.py", "*/selectors.py", "geo/resolve.py")
    for p in ROOT.glob(pattern)
    if ".venv" not in p.parts
)
# Formatters and normalisers shared with tools and the admin, not services: called with the one value they format.
POSITIONAL = {("ledger/services.py", "yen")}


def _public_functions(path: str):
    for node in ast.parse((ROOT / path).read_text()).body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield node


def test_the_modules_are_found():
    assert "cinema/services.py" in MODULES and "reminders/selectors.py" in MODULES


@pytest.mark.parametrize("path", MODULES)
def test_public_services_and_selectors_are_keyword_only_and_annotated(path):
    problems = []
    for fn in _public_functions(path):
        positional = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        if positional and (path, fn.name) not in POSITIONAL:
            problems.append(f"{fn.name}: positional {positional}")
        every = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        missing = [a.arg for a in every if a.annotation is None]
        if missing or fn.returns is None:
            problems.append(f"{fn.name}: not annotated {missing or ['return']}")
    assert problems == []
