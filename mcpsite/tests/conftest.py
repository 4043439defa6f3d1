import pytest

from . import tools_for_tests


@pytest.fixture(autouse=True)
def test_tools():
    tools_for_tests.install()
    yield
    tools_for_tests.uninstall()


class FakeClock:
    """The rate limiter's clock, set by the test (seconds since the epoch)."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def rate_clock(monkeypatch) -> FakeClock:
    """The rate limiter in this process reads this clock: move `rate_clock.now` instead of sleeping."""
    from mcpsite.core import limits

    clock = FakeClock()
    monkeypatch.setattr(limits.limiter, "clock", clock)
    return clock
