"""System checks for the cinema settings: a bad value stops `manage.py check` with a clear message."""

from django.conf import settings
from django.core import checks

from mcpsite.checks import RATE_RE
from mcpsite.core.problems import SETTINGS, Problem, check_messages


def settings_problems() -> list[Problem]:
    problems = []
    seats = settings.CINEMA_MAX_SEATS_PER_RESERVATION
    if not isinstance(seats, int) or not 1 <= seats <= 50:
        problems.append(
            Problem("cinema.E001", f"CINEMA_MAX_SEATS_PER_RESERVATION={seats!r} must be an integer from 1 to 50")
        )
    rate = settings.CINEMA_PASSWORD_RATE
    if not isinstance(rate, str) or not RATE_RE.match(rate) or rate.startswith("0/"):
        problems.append(
            Problem("cinema.E002", f"CINEMA_PASSWORD_RATE={rate!r} is not a rate of wrong passwords like 5/15m")
        )
    return problems


@checks.register(SETTINGS)
def check_cinema_settings(app_configs, **kwargs):
    return check_messages(settings_problems())
