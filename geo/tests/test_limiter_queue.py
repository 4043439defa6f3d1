"""The GaluchatAPI limiter fails fast when its queue is long, instead of parking one more worker thread behind a
slow or dead upstream (a resolve_points flood held workers 4–17 s each and starved other tenants)."""

import itertools
import threading

import pytest

from geo import galuchat


def test_a_caller_beyond_the_queue_bound_fails_at_once():
    step, ticks, gate = [0.0], itertools.count(), threading.Event()
    limiter = galuchat.RateLimiter(clock=lambda: next(ticks) * step[0], sleep=lambda _s: gate.wait(10))
    limiter.acquire(1)  # the window's one start
    bound = int(1 * galuchat.RateLimiter.MAX_QUEUE_SECONDS / (1.0 + galuchat.RateLimiter.MARGIN_S))
    waiters = [threading.Thread(target=limiter.acquire, args=(1,)) for _ in range(bound)]
    for waiter in waiters:
        waiter.start()
    for _ in range(1000):
        if limiter._waiting == bound:
            break
        gate.wait(0.01)
    assert limiter._waiting == bound
    with pytest.raises(galuchat.QueueFull):
        limiter.acquire(1)
    step[0], _ = 10.0, gate.set()  # time moves on: every waiter gets its start
    for waiter in waiters:
        waiter.join(10)
    assert limiter._waiting == 0 and not any(w.is_alive() for w in waiters)
