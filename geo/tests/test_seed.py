import pytest
from django.core.management import call_command

from geo.models import PointLookup

pytestmark = pytest.mark.django_db


def test_seed_is_idempotent():
    call_command("seed_geo")
    call_command("seed_geo")
    assert PointLookup.objects.count() == 3
    assert {lookup.outcome for lookup in PointLookup.objects.all()} == {"PENDING"}


def test_seed_can_resolve(fake_galuchat):
    call_command("seed_geo", "--resolve")
    assert {lookup.outcome for lookup in PointLookup.objects.all()} == {"OK"}
    assert {r.path for r in fake_galuchat.received} == {"/raacs", "/resareas", "/rjccs"}
