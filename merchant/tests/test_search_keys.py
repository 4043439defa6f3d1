"""Japanese search keys: width, kana and long-vowel variants meet."""

import pytest

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
