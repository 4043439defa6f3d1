"""System checks as tables of problems: each app lists what is wrong with its settings, one function turns the list
into Django's check messages. (geo's configuration was the model: `geo/conf.py config_problems`.)"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.core import checks

# The tag of the checks that validate settings. `manage.py check` runs them with every other check; the ASGI
# application's startup runs these alone (no database, no models) and refuses to serve on their errors.
SETTINGS = "settings"


@dataclass(frozen=True, slots=True)
class Problem:
    id: str
    message: str
    hint: str = ""
    warning: bool = False


def check_messages(problems: Iterable[Problem]) -> list[checks.CheckMessage]:
    """Errors (a warning when `warning`), with their hints, for `manage.py check`."""
    return [
        (checks.Warning if problem.warning else checks.Error)(problem.message, hint=problem.hint or None, id=problem.id)
        for problem in problems
    ]
