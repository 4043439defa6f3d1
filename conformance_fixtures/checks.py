"""The fixtures are for the conformance run only: a deployment (DEBUG off) that installs them fails its checks."""

from __future__ import annotations

from django.apps import apps
from django.conf import settings
from django.core import checks

from mcpsite.core.problems import SETTINGS, Problem, check_messages


def settings_problems() -> list[Problem]:
    if settings.DEBUG or not apps.is_installed("conformance_fixtures"):
        return []
    return [
        Problem(
            "conformance_fixtures.E001",
            "conformance_fixtures is installed with DEBUG off: its diagnostic tools are for the conformance run only",
            hint="Remove it from INSTALLED_APPS; only conformance_fixtures.settings (scripts/conformance) installs it.",
        )
    ]


@checks.register(SETTINGS, checks.Tags.security)
def conformance_fixtures_settings(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    return check_messages(settings_problems())
