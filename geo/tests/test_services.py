"""Saved lookups: the outcome is stored as the seed would answer (results or error, never both)."""

import pytest
from django.db import IntegrityError, transaction

from geo.errors import InvalidInput
from geo.models import PointLookup
from geo.services import point_lookup_create, point_lookup_refresh

from .fake_galuchat import expected_result

pytestmark = pytest.mark.django_db


def test_create_saves_the_results(fake_galuchat, user):
    lookup = point_lookup_create(granularity="estat", points=[{"ref": "a", "lat": 35, "lon": 139}], actor=user)
    code, address = expected_result("estat", (139000, 35000))
    assert lookup.results == [{"ref": "a", "code": code, "address": address}]
    assert (lookup.error, lookup.point_count, lookup.outcome, lookup.created_by) == (None, 1, "OK", user)


def test_upstream_error_is_saved_as_the_error(fake_galuchat):
    fake_galuchat.status = 503
    lookup = point_lookup_create(granularity="admin", points=[{"lat": 35, "lon": 139}])
    assert lookup.results is None and lookup.error["code"] == "API_ERROR" and lookup.outcome == "API_ERROR"


def test_invalid_input_saves_nothing(fake_galuchat):
    with pytest.raises(InvalidInput):
        point_lookup_create(granularity="admin", points=[{"lat": 95, "lon": 139}])
    assert not PointLookup.objects.exists()


def test_refresh_replaces_an_error_with_results(fake_galuchat, settings):
    settings.GALUCHAT_CACHE_TTL = 0
    fake_galuchat.status, fake_galuchat.fail_on_call = 429, 1
    lookup = point_lookup_create(granularity="jarl", points=[{"lat": 35, "lon": 139}])
    assert lookup.error["code"] == "RATE_LIMIT"
    refreshed = point_lookup_refresh(lookup=lookup)
    assert refreshed.error is None and refreshed.results[0]["code"] == expected_result("jarl", (139000, 35000))[0]


def test_database_refuses_results_together_with_an_error():
    with pytest.raises(IntegrityError), transaction.atomic():
        PointLookup.objects.create(granularity="admin", results=[], error={"code": "INTERNAL", "message": "x"})


def test_database_refuses_an_unknown_granularity():
    with pytest.raises(IntegrityError), transaction.atomic():
        PointLookup.objects.create(granularity="city")
