"""表記揺れ: the normalisation and matching rules behind get_movie_list's query."""

import pytest

from cinema.search import match_score, normalize


@pytest.mark.parametrize(
    "spelling", ["スタームービー", "すたーむーびー", "ｽﾀｰﾑｰﾋﾞｰ", "スタームビー", "ｽﾀｰ・ﾑｰﾋﾞｰ", "スター ムービー"]
)
def test_spellings_normalise_alike(spelling):
    assert normalize(spelling) == normalize("スタームービー")


def test_small_typos_match_but_other_titles_do_not():
    title = normalize("スタームービー")
    assert match_score(normalize("スタームーピー"), title) > 0  # ビ/ピ typo
    assert match_score(normalize("スターウォーズ"), title) == 0
    assert match_score(normalize("ゴジラ"), title) == 0


def test_short_queries_must_be_substrings():
    assert match_score(normalize("スタ"), normalize("スターダスト")) == 100
    assert match_score(normalize("スダ"), normalize("スターダスト")) == 0


def test_latin_titles_fold_case_and_width():
    assert normalize("ＳＴＡＲ Wars") == "starwars"
