"""Japanese text folding and trimmed-text validation: written once, used by every app.

The three foldings differ on purpose, each pinned by `mcpsite/tests/test_text.py`:
- `title_key` (cinema's film titles): width, case and kana folded to katakana, and the marks people drop or add at
  will removed — long vowel marks, dashes, middle dots, spaces, punctuation — so ｽﾀｰﾑｰﾋﾞｰ meets スタームービー.
- `search_key` (merchant's product keys, stored in the database and indexed): to hiragana; long vowel marks,
  wave dashes and middle dots dropped; words kept apart by one space (control characters separate words: a NUL
  would end an FTS5 string early and PostgreSQL refuses it).
- `name_key` (reminders' contact names): to hiragana, case folded (ß = ss), whitespace dropped (山田　花子,
  山田 花子 and 山田花子 are one name: Japanese names are written with or without a space), nothing else dropped: a
  name keeps its marks.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

import jaconv
from jaconv.conv_table import K2H_TABLE

from .errors import InvalidParams

# Long vowel marks and dashes, middle dots, spaces and punctuation that are spelt inconsistently.
_TITLE_NOISE = re.compile(r"[\s\-‐‑‒–—―ー〜~～・･·.,、。!！?？:：'\"「」『』()（）]+")
# Katakana to hiragana (jaconv.kata2hira's own table) and the long-vowel marks, wave dashes and middle dots dropped
# (after NFKC: ｰ -> ー, ･ -> ・) in one str.translate: each pass walks the text through a dict lookup per character,
# and merchant's search folds every candidate's name to rank it.
_SEARCH_FOLD = {**K2H_TABLE, **dict.fromkeys(map(ord, "ー〜～・"))}
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _folded(text: str | None, *, katakana: bool, casefold: bool = False) -> str:
    """NFKC (full/half width), then case and kana folded."""
    text = unicodedata.normalize("NFKC", text or "")
    text = text.casefold() if casefold else text.lower()
    return jaconv.hira2kata(text) if katakana else jaconv.kata2hira(text)


def title_key(text: str | None) -> str:
    return _TITLE_NOISE.sub("", _folded(text, katakana=True))


def search_key(text: str | None) -> str:
    text = unicodedata.normalize("NFKC", text or "").lower().translate(_SEARCH_FOLD)
    # split() with no separator splits on exactly what \s matches and drops the ends: whitespace collapsed.
    return " ".join(_CONTROLS.sub(" ", text).split())


def search_terms(query: str | None, *, max_terms: int = 10) -> list[str]:
    """The distinct `search_key` terms of a query, in order (split on any whitespace), at most `max_terms`."""
    return list(dict.fromkeys(search_key(query).split()))[:max_terms]


def name_key(text: str | None) -> str:
    # split() with no separator splits on every run of whitespace (NFKC has made U+3000 a plain space already).
    return "".join(_folded(text, katakana=False, casefold=True).split())


def trimmed(value: str | None, *, limit: int, too_long: str, blank: str | None = None) -> str:
    """`value` without surrounding whitespace (None is ""), at most `limit` characters.

    InvalidParams(`too_long`, formatted with `length` and `limit`) when longer; with `blank`, InvalidParams(`blank`)
    when nothing is left. The messages are the apps' own (they are part of each seed's contract)."""
    text = (value or "").strip()
    if blank is not None and not text:
        raise InvalidParams(blank)
    if len(text) > limit:
        raise InvalidParams(too_long.format(length=len(text), limit=limit))
    return text


def url_origin(url: str) -> str:
    """scheme://host[:port] of a URL, for logs, pages and traces: its credentials, path and query may be secrets."""
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{parts.hostname or '?'}{port}"
