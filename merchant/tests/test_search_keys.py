"""Japanese search keys: width, kana and long-vowel variants meet."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from merchant.search_keys import normalize, query_terms


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("むぎぼー", "むぎぼ"),
        ("ムギボー", "むぎぼ"),
        ("ﾑｷﾞﾎﾞｰ", "むぎぼ"),
        ("カレンダー", "かれんだ"),
        ("カレンダ", "かれんだ"),
        ("Ｔシャツ", "tしゃつ"),
        ("ボール・ペン", "ぼるぺん"),
        ("  かわいい　グッズ ", "かわいい ぐっず"),
    ],
)
def test_normalize_folds_width_kana_and_long_vowels(text, key):
    assert normalize(text) == key


def test_query_terms_are_distinct_normalised_words():
    assert query_terms("むぎぼー ムギボー　カレンダー") == ["むぎぼ", "かれんだ"]
    assert query_terms("   ") == []


def _normalize_step_by_step(text: str) -> str:
    """The definition, one step at a time (as normalize was written before its passes were merged)."""
    import re
    import unicodedata

    import jaconv

    text = jaconv.kata2hira(unicodedata.normalize("NFKC", text).lower())
    text = re.sub(r"[\x00-\x1f\x7f-\x9f]", " ", text.translate(str.maketrans("", "", "ー〜～・")))
    return re.sub(r"\s+", " ", text).strip()


_KANA_AND_SPACES = st.characters(
    codec="utf-8",
    categories=None,
    include_characters="ｰｰ･ー〜～・ァアヴヵヶヽヾ゛゜ｧｶﾞ\u3099\u309a \u3000\t\n\x85\u2028\xa0\x00\x1f",
)


@given(st.text(alphabet=st.one_of(_KANA_AND_SPACES, st.characters(min_codepoint=0x3000, max_codepoint=0x30FF))))
@settings(max_examples=500, deadline=None)
def test_normalize_equals_its_step_by_step_definition(text):
    assert normalize(text) == _normalize_step_by_step(text)
