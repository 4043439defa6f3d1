"""The HTTP client against real loopback sockets (timeouts, refused connections) and the rate limiter."""

import socket
import threading

import pytest

from geo import galuchat
from geo.conf import galuchat_config
from geo.errors import ApiError
from mcpsite.tests.live import free_port


@pytest.fixture
def silent_server():
    """A loopback server that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}", accepted
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


def test_read_timeout_is_api_error_and_not_retried(settings, silent_server):
    url, accepted = silent_server
    settings.GALUCHAT_BASE_URL, settings.GALUCHAT_TIMEOUT_MS = url, 200
    with pytest.raises(ApiError, match="timed out after 200 ms"):
        galuchat.lookup(galuchat_config(), "admin", [[139000, 35000]], location="points[0]")
    assert len(accepted) == 1  # the request may have reached the server: never resent


def test_refused_connection_is_api_error(settings):
    settings.GALUCHAT_BASE_URL = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(ApiError, match="Could not connect") as info:
        galuchat.lookup(galuchat_config(), "estat", [[139000, 35000]], location="points[4]")
    assert info.value.location == "points[4]"


class FakeClock:
    def __init__(self):
        self.now = 100.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def test_rate_limiter_allows_a_burst_then_waits_for_the_window():
    clock = FakeClock()
    limiter = galuchat.RateLimiter(clock=clock, sleep=clock.sleep)
    starts = []
    for _ in range(25):
        limiter.acquire(10)
        starts.append(clock.now)
    assert starts[:10] == [100.0] * 10
    window = 1.0 + galuchat.RateLimiter.MARGIN_S
    assert starts[10] == pytest.approx(100 + window) and starts[20] == pytest.approx(100 + 2 * window)
    for i in range(len(starts)):  # never more than 10 starts in any one-second window
        assert sum(1 for s in starts if starts[i] <= s < starts[i] + 1) <= 10


def test_rate_below_one_per_second_spaces_calls():
    clock = FakeClock()
    limiter = galuchat.RateLimiter(clock=clock, sleep=clock.sleep)
    limiter.acquire(0.5)
    limiter.acquire(0.5)
    assert clock.now == pytest.approx(102.0 + galuchat.RateLimiter.MARGIN_S)


def test_excerpt_flattens_and_trims():
    assert galuchat.excerpt("a\n\tb\x00c") == "a b c"
    assert galuchat.excerpt("x" * 500) == "x" * 200 + "…"
