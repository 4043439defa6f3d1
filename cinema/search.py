"""表記揺れ-tolerant title matching: NFKC + jaconv + rapidfuzz.

`normalize` folds the variations a customer's spelling may have: full/half width (NFKC turns
ｽﾀｰﾑｰﾋﾞｰ into スタームービー), hiragana/katakana (jaconv), case, and the marks people drop or
add at will (long vowel marks, middle dots, spaces, hyphens). `match_score` then accepts a
substring of the normalised title, or a close fuzzy match for small typos.
"""

from __future__ import annotations

from rapidfuzz import fuzz

from mcpsite.core.text import title_key as normalize  # the folding lives with the other apps' (mcpsite/core/text.py)

__all__ = ["FUZZY_MIN_LENGTH", "FUZZY_THRESHOLD", "match_score", "normalize"]

# Fuzzy matches below this partial_ratio are not matches (tuned on the tests' typo examples).
FUZZY_THRESHOLD = 75.0
# Shorter normalised queries must match as substrings: fuzzy matching of 1–2 characters finds noise.
FUZZY_MIN_LENGTH = 3


def match_score(query_key: str, title_key: str) -> float:
    """0–100: 100 for a substring match, else the fuzzy score when it passes the threshold, else 0."""
    if not query_key:
        return 100.0
    if query_key in title_key:
        return 100.0
    if len(query_key) < FUZZY_MIN_LENGTH:
        return 0.0
    score = fuzz.partial_ratio(query_key, title_key)
    if len(title_key) < len(query_key):
        score = fuzz.ratio(query_key, title_key)
    return score if score >= FUZZY_THRESHOLD else 0.0
