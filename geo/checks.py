"""System check: a bad GaluchatAPI configuration stops `manage.py check` instead of the first call."""

from django.core import checks

from .conf import config_problems


@checks.register()
def check_galuchat_settings(app_configs, **kwargs):
    return [
        (checks.Warning if problem.warning else checks.Error)(problem.message, hint=problem.hint or None, id=problem.id)
        for problem in config_problems()
    ]
