"""The staff pages' screenshots in docs/images, in Japanese and English, taken by their browser tests when
`DOCS_IMAGES` names the folder (`DOCS_IMAGES=docs/images .venv/bin/pytest <test>`); without it, nothing."""

from __future__ import annotations

import os


def screenshot_in_both_languages(page, url: str, selector: str, name: str) -> None:
    """`selector` of the page at `url` as `<name>-ja.png` (the test's Japanese browser) and `<name>-en.png` (a
    browser asking for English, signed in as the same user)."""
    images = os.environ.get("DOCS_IMAGES")
    if not images:
        return
    page.goto(url)
    page.locator(selector).screenshot(path=os.path.join(images, f"{name}-ja.png"))
    english = page.context.browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    try:
        english.add_cookies(page.context.cookies())
        other = english.new_page()
        other.goto(url)
        other.locator(selector).screenshot(path=os.path.join(images, f"{name}-en.png"))
    finally:
        english.close()
