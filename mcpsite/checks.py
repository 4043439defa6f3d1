"""System checks for platform settings."""

import logging
import re
from pathlib import Path

from django.conf import settings
from django.core import checks

from .core.problems import SETTINGS, Problem, check_messages
from .cors import origin_valid

logger = logging.getLogger("mcpsite")

RATE_RE = re.compile(r"^\d+/\d*[smhd]$")


def settings_problems() -> list[Problem]:
    problems = []
    if not RATE_RE.match(settings.MCP_DEFAULT_RATE):
        problems.append(
            Problem("mcpsite.E001", f"MCP_DEFAULT_RATE={settings.MCP_DEFAULT_RATE!r} is not a rate like 100/m")
        )
    if settings.MCP_MAX_BODY_BYTES < 1024:
        problems.append(Problem("mcpsite.E002", "MCP_MAX_BODY_BYTES must be at least 1024"))
    if settings.HTTP_MAX_BODY_BYTES < settings.MCP_MAX_BODY_BYTES:
        problems.append(Problem("mcpsite.E003", "HTTP_MAX_BODY_BYTES must be at least MCP_MAX_BODY_BYTES"))
    if not 0 < settings.HTTP_BODY_TIMEOUT_S <= 600:
        problems.append(Problem("mcpsite.E004", "HTTP_BODY_TIMEOUT_S must be more than 0 and at most 600"))
    if not 0 < settings.MCP_REQUEST_STATE_TTL <= 86_400:
        problems.append(Problem("mcpsite.E005", "MCP_REQUEST_STATE_TTL must be more than 0 and at most 86400 (s)"))
    for origin in settings.CORS_ALLOWED_ORIGINS:
        if not origin_valid(origin):
            problems.append(
                Problem(
                    "mcpsite.E006", f"CORS_ALLOWED_ORIGINS: {origin!r} is not an origin like https://app.example.com"
                )
            )
    if not 60 <= settings.MCP_IDEMPOTENCY_RETENTION <= 30 * 86_400:
        problems.append(Problem("mcpsite.E009", "MCP_IDEMPOTENCY_RETENTION must be from 60 to 2592000 (s)"))
    for name in ("DATABASE_STATEMENT_TIMEOUT", "DATABASE_LOCK_TIMEOUT"):
        raw = str(getattr(settings, name))
        try:
            valid = float(raw) >= 0
        except ValueError:
            valid = False
        if not valid:
            problems.append(Problem("mcpsite.E040", f"{name}={raw!r} must be a number of seconds, 0 or more"))
    return problems


@checks.register(checks.Tags.security, SETTINGS)
def check_platform_settings(app_configs, **kwargs):
    return check_messages(settings_problems())


def catalogue_problems(*, deploy: bool) -> list[Problem]:
    """Each translation catalogue under LOCALE_PATHS compiled (without its .mo the OAuth and staff pages fall back to
    English, half translated by Django's own catalogues); with `deploy`, compiled since its source last changed."""
    problems = []
    hint = "Run `manage.py compilemessages --locale ja` (`make messages`) in the deployed checkout"
    for directory in settings.LOCALE_PATHS:
        for source in sorted(Path(directory).glob("*/LC_MESSAGES/*.po")):
            compiled = source.with_suffix(".mo")
            if not compiled.exists():
                problems.append(Problem("mcpsite.E007", f"{source} is not compiled ({compiled.name} is missing)", hint))
            elif deploy and compiled.stat().st_mtime < source.stat().st_mtime:
                problems.append(Problem("mcpsite.E008", f"{compiled} is older than {source.name}", hint))
    return problems


@checks.register(checks.Tags.translation, SETTINGS)
def check_catalogues_compiled(app_configs, **kwargs):
    return check_messages(catalogue_problems(deploy=False))


@checks.register(checks.Tags.translation, deploy=True)
def check_catalogues_current(app_configs, **kwargs):
    return check_messages(p for p in catalogue_problems(deploy=True) if p.id == "mcpsite.E008")


def startup_refusal() -> str | None:
    """Why the server must not start: the errors of the settings checks (the ones `manage.py check` runs, tagged
    SETTINGS; silenced ones excepted), as one message; None when there are none. Warnings are logged."""
    issues = [issue for issue in checks.run_checks(tags=[SETTINGS]) if not issue.is_silenced()]
    for issue in issues:
        if not issue.is_serious():
            logger.warning("System check: %s", issue)
    errors = [str(issue) for issue in issues if issue.is_serious()]
    if not errors:
        return None
    return "The site does not start: its settings have errors (`manage.py check` names them too):\n" + "\n".join(errors)
