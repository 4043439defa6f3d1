"""The three Japanese foldings and the trimmed-text check, pinned as they behaved when they lived in the apps
(cinema/search.py, merchant/search_keys.py, reminders/selectors.py): merchant's keys are stored and indexed, so a
change here needs `manage.py search_index rebuild`."""

from __future__ import annotations

import pytest

from mcpsite.core.errors import InvalidParams
from mcpsite.core.text import name_key, search_key, title_key, trimmed

# text, title_key (cinema), search_key (merchant), name_key (reminders)
FOLDINGS = [
    ("ｽﾀｰﾑｰﾋﾞｰ", "スタムビ", "すたむび", "すたーむーびー"),
    ("スタームービー", "スタムビ", "すたむび", "すたーむーびー"),
    ("すたーむーびー", "スタムビ", "すたむび", "すたーむーびー"),
    ("むぎぼーカレンダー2025", "ムギボカレンダ2025", "むぎぼかれんだ2025", "むぎぼーかれんだー2025"),
    ("ﾑｷﾞﾎﾞｰ", "ムギボ", "むぎぼ", "むぎぼー"),
    ("  Taro  Yamada ", "taroyamada", "taro yamada", "taroyamada"),
    ("山田　花子", "山田花子", "山田 花子", "山田花子"),
    ("ｔａｒｏ", "taro", "taro", "taro"),
    ("Straße", "straße", "straße", "strasse"),
    ("北欧風・クッション", "北欧風クッション", "北欧風くっしょん", "北欧風・くっしょん"),
    ("a\x00b\tc\n", "a\x00bc", "a b c", "a\x00bc"),
    ("", "", "", ""),
    ("Ｍｏｖｉｅ-Ｎｉｇｈｔ！", "movienight", "movie-night!", "movie-night!"),
    ("カレンダ～", "カレンダ", "かれんだ~", "かれんだ~"),
    ("ヴァイオリン", "ヴァイオリン", "ゔぁいおりん", "ゔぁいおりん"),
]


@pytest.mark.parametrize(("text", "title", "search", "name"), FOLDINGS)
def test_each_folding_keeps_its_behaviour(text, title, search, name):
    assert (title_key(text), search_key(text), name_key(text)) == (title, search, name)


def test_none_folds_to_empty():
    assert (title_key(None), search_key(None), name_key(None)) == ("", "", "")


# value, limit, blank message, result or the error's message
TRIMMED = [
    ("  山田  ", 5, None, "山田"),
    (None, 5, None, ""),
    ("   ", 5, None, ""),
    ("   ", 5, "name must not be empty", "name must not be empty"),
    ("abcdef", 5, None, "too long: 6 > 5"),
    (" abcde ", 5, "name must not be empty", "abcde"),
]


@pytest.mark.parametrize(("value", "limit", "blank", "expected"), TRIMMED)
def test_trimmed(value, limit, blank, expected):
    try:
        result = trimmed(value, limit=limit, blank=blank, too_long="too long: {length} > {limit}")
    except InvalidParams as exc:
        result = exc.message
    assert result == expected
