"""System checks for the reminders settings: a bad value stops `manage.py check` with a clear message."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string


@checks.register()
def reminders_settings(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    cap = settings.REMINDERS_MAX_DURATION_MIN
    if not isinstance(cap, int) or cap < 1:
        errors.append(checks.Error("REMINDERS_MAX_DURATION_MIN must be a positive whole number", id="reminders.E001"))
    if settings.SMS_BACKEND:
        try:
            backend = import_string(settings.SMS_BACKEND)
        except ImportError as exc:
            errors.append(
                checks.Error(f"SMS_BACKEND {settings.SMS_BACKEND!r} cannot be imported: {exc}", id="reminders.E002")
            )
        else:
            if not callable(getattr(backend, "send", None)):
                errors.append(checks.Error("SMS_BACKEND must name a class with a send() method", id="reminders.E003"))
    parts = urlsplit(settings.SITE_URL)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        errors.append(
            checks.Error(f"SITE_URL must be an absolute http(s) URL, got {settings.SITE_URL!r}", id="reminders.E004")
        )
    if settings.REMINDERS_WEBHOOK_ALLOW_PRIVATE and not settings.DEBUG:
        errors.append(
            checks.Warning(
                "REMINDERS_WEBHOOK_ALLOW_PRIVATE is on: webhooks may reach loopback and private addresses",
                hint="Use it only for a local receiver in development (see docs/security.md, Staff permissions).",
                id="reminders.W001",
            )
        )
    return errors
