"""System check: a bad GaluchatAPI configuration stops `manage.py check` instead of the first call."""

from django.core import checks

from mcpsite.core.problems import SETTINGS, check_messages

from .conf import config_problems


@checks.register(SETTINGS)
def check_galuchat_settings(app_configs, **kwargs):
    return check_messages(config_problems())
