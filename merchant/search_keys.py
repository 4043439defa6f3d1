"""Normalised search keys for Japanese text: the one place both search backends agree on.

`ﾑｷﾞﾎﾞｰ`, `ムギボー` and `むぎぼー` must meet, and `カレンダ` must find `カレンダー`:
NFKC folds half-width kana and full-width Latin, katakana become hiragana, long-vowel marks and
middle dots are dropped (they are the parts users leave out or type differently), and Latin is
lower-cased.
"""

from __future__ import annotations

# Written once with the other apps' foldings (mcpsite/core/text.py); the staff's global search splits terms alike.
from mcpsite.core.text import search_key as normalize  # noqa: F401
from mcpsite.core.text import search_terms as query_terms  # noqa: F401

# --- short terms -------------------------------------------------------------------------------
# A trigram index cannot serve a term of one or two characters (抹茶, 方眼, ぼ). Every 1- and 2-character
# substring of a key (without whitespace: terms never hold any) is indexed instead: an FTS5 table of
# these grams on SQLite, a GIN expression index over the same grams on PostgreSQL (migration 0002).
SHORT_GRAM = 2
# The trigram indexes (SQLite FTS5's tokenizer, pg_trgm) match terms of three characters or more.
TRIGRAM = 3


def short_grams(key: str) -> list[str]:
    """The distinct 1- and 2-character substrings of a search key that hold no whitespace, in order."""
    grams = dict.fromkeys(key[i : i + n] for n in (1, SHORT_GRAM) for i in range(len(key) - n + 1))
    return [g for g in grams if not any(ch.isspace() for ch in g)]


def term_grams(term: str) -> list[str]:
    """The grams every key holding `term` holds: its distinct 2-character substrings (the term itself when shorter).
    Necessary, not sufficient: they may lie apart in the key."""
    return list(dict.fromkeys(term[i : i + SHORT_GRAM] for i in range(len(term) - SHORT_GRAM + 1))) or [term]


def gram_token(gram: str) -> str:
    """A gram as one ASCII FTS5 token (g + hex code points): no tokenizer can split, fold or drop it."""
    return "g" + "x".join(f"{ord(ch):x}" for ch in gram)


def gram_tokens(key: str | None) -> str:
    """The FTS5 document of a key's grams (the SQLite function `merchant_gram_tokens`)."""
    return " ".join(gram_token(g) for g in short_grams(key or ""))
