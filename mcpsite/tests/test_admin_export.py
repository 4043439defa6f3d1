"""The admin's CSV cells (mcpsite/admin_export.py): text a spreadsheet would run as a formula is quoted."""

from __future__ import annotations

import pytest

from mcpsite.admin_export import cell


@pytest.mark.parametrize(
    "text",
    [
        "=1+1",
        "+1",
        "-1",
        "@SUM(A1)",
        "\t=1",
        "\r=1",
        # Full-width signs, which spreadsheets normalise.
        "＝HYPERLINK(1)",
        "＋1",
        "－1",
        "＠SUM(A1)",
        # Whitespace before a sign, full-width space included.
        " =1+1",
        "   +1",
        "\n-1",
        "　@SUM(A1)",
        "　＝1",
    ],
)
def test_formulas_are_quoted(text):
    assert cell(text) == "'" + text


@pytest.mark.parametrize("text", ["山田花子", "a=1", "1-2", "x@example.com", " 映画", "", "ー長音", "＃1"])
def test_other_text_is_kept(text):
    assert cell(text) == text
