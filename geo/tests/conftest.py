import pytest
import responses

from geo import galuchat, pointcache

from .fake_galuchat import BASE_URL, FakeGaluchat


@pytest.fixture(autouse=True)
def _geo_isolation(settings):
    """Each test talks to the fake host, with a fresh rate window and an empty point cache."""
    settings.GALUCHAT_BASE_URL = BASE_URL
    galuchat.rate_limiter.reset()
    pointcache.clear()
    yield
    pointcache.clear()


@pytest.fixture
def fake_galuchat():
    """The fake upstream; requests to any other address fail (responses refuses them)."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        fake = FakeGaluchat(mock)
        fake.install()
        yield fake
        assert fake.violations == [], fake.violations
