"""Start a counted burst early in a rate-limit window.

django-ratelimit counts in fixed windows whose boundaries are offset per counted value (a CRC of it). A burst that
straddles a boundary is split between two counts, so "the 101st request at 100/m is refused" only holds when all 101
land in one window. Tests that count a burst call `start_in_a_fresh_window` first: it sleeps past the boundary when
the current window has too little time left. The window arithmetic is django-ratelimit's own (pinned version).
"""

from __future__ import annotations

import time

from django_ratelimit.core import _get_window, _split_rate


def start_in_a_fresh_window(value: object, rate: str, needed: float = 15.0) -> None:
    """Return when the window counting `value` (an API key's pk, a reservation id) at `rate` has `needed` seconds
    (at most half its period) left."""
    value = str(value)
    _count, period = _split_rate(rate)
    seconds_left = _get_window(value, period) - time.time()
    if seconds_left < min(needed, period / 2):
        time.sleep(seconds_left + 1.05)  # the window's last whole second still counts in it
