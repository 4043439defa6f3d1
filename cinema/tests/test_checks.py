"""Bad cinema settings stop `manage.py check`."""

import pytest

from cinema.checks import check_cinema_settings


def test_defaults_pass(settings):
    assert check_cinema_settings(None) == []


@pytest.mark.parametrize(
    ("name", "value", "error_id"),
    [
        ("CINEMA_MAX_SEATS_PER_RESERVATION", 0, "cinema.E001"),
        ("CINEMA_PASSWORD_RATE", "five", "cinema.E002"),
        ("CINEMA_PASSWORD_RATE", "0/15m", "cinema.E002"),
    ],
)
def test_bad_values_are_reported(settings, name, value, error_id):
    setattr(settings, name, value)
    assert [e.id for e in check_cinema_settings(None)] == [error_id]
