"""Every documentation path the code names exists, and every relative link in the docs leads somewhere.

Comments, messages and docstrings point readers at `docs/…md` (and once pointed at READMEs that never existed);
a page that is renamed or removed must take those pointers with it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".venv", ".tools", ".git", "var", "node_modules", "staticfiles", "__pycache__"}
# Markdown pages are checked by their links (relative to the page), below.
SOURCE_SUFFIXES = {".py", ".html", ".txt", ".po", ".toml", ".yml", ".yaml", ".cfg"}
# `docs/…md`, or any `<dir>/README.md`, as written in source text.
DOC_PATH = re.compile(r"(?<![\w./-])((?:docs/[\w./-]+?\.md)|(?:[\w-]+/)+README\.md)(?![\w/])")
MARKDOWN_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _project_files():
    for path in ROOT.rglob("*"):
        if SKIP_DIRS.intersection(path.relative_to(ROOT).parts) or not path.is_file():
            continue
        if path.suffix in SOURCE_SUFFIXES or path.name == "Makefile" or path.parent.name == "scripts":
            yield path


def _named_doc_paths():
    for path in _project_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in DOC_PATH.finditer(text):
            yield path.relative_to(ROOT).as_posix(), match.group(1)


def test_the_scan_finds_the_pointers_it_checks():
    named = {doc for _source, doc in _named_doc_paths()}
    assert {"docs/security.md", "docs/apps/cinema.md", "docs/apps/merchant.md"} <= named


@pytest.mark.parametrize(("source", "doc"), sorted(set(_named_doc_paths())))
def test_every_doc_path_named_in_the_project_exists(source, doc):
    assert (ROOT / doc).is_file(), f"{source} names {doc}, which does not exist"


def test_every_relative_link_in_the_docs_exists():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = []
    for page in pages:
        for target in MARKDOWN_LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []
