"""System checks for the reminders settings: a bad value stops `manage.py check` with a clear message."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from mcpsite.core.problems import SETTINGS, Problem, check_messages


def settings_problems() -> list[Problem]:
    problems = []
    cap = settings.REMINDERS_MAX_DURATION_MIN
    if not isinstance(cap, int) or cap < 1:
        problems.append(Problem("reminders.E001", "REMINDERS_MAX_DURATION_MIN must be a positive whole number"))
    if settings.SMS_BACKEND:
        try:
            backend = import_string(settings.SMS_BACKEND)
        except ImportError as exc:
            problems.append(
                Problem("reminders.E002", f"SMS_BACKEND {settings.SMS_BACKEND!r} cannot be imported: {exc}")
            )
        else:
            if not callable(getattr(backend, "send", None)):
                problems.append(Problem("reminders.E003", "SMS_BACKEND must name a class with a send() method"))
    parts = urlsplit(settings.SITE_URL)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        problems.append(
            Problem("reminders.E004", f"SITE_URL must be an absolute http(s) URL, got {settings.SITE_URL!r}")
        )
    if settings.REMINDERS_WEBHOOK_ALLOW_PRIVATE and not settings.DEBUG:
        problems.append(
            Problem(
                "reminders.W001",
                "REMINDERS_WEBHOOK_ALLOW_PRIVATE is on: webhooks may reach loopback and private addresses",
                hint="Use it only for a local receiver in development (see docs/security.md, Staff permissions).",
                warning=True,
            )
        )
    return problems


@checks.register(SETTINGS)
def reminders_settings(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    return check_messages(settings_problems())
