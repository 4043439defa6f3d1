"""System checks for platform settings."""

import re

from django.conf import settings
from django.core import checks

RATE_RE = re.compile(r"^\d+/\d*[smhd]$")


@checks.register(checks.Tags.security)
def check_platform_settings(app_configs, **kwargs):
    errors = []
    if not RATE_RE.match(settings.MCP_DEFAULT_RATE):
        errors.append(
            checks.Error(
                f"MCP_DEFAULT_RATE={settings.MCP_DEFAULT_RATE!r} is not a rate like 100/m",
                id="mcpsite.E001",
            )
        )
    if settings.MCP_MAX_BODY_BYTES < 1024:
        errors.append(checks.Error("MCP_MAX_BODY_BYTES must be at least 1024", id="mcpsite.E002"))
    if settings.HTTP_MAX_BODY_BYTES < settings.MCP_MAX_BODY_BYTES:
        errors.append(checks.Error("HTTP_MAX_BODY_BYTES must be at least MCP_MAX_BODY_BYTES", id="mcpsite.E003"))
    if not 0 < settings.HTTP_BODY_TIMEOUT_S <= 600:
        errors.append(checks.Error("HTTP_BODY_TIMEOUT_S must be more than 0 and at most 600", id="mcpsite.E004"))
    return errors
