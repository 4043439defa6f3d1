from django.apps import AppConfig
from django.conf import settings


class ConformanceFixturesConfig(AppConfig):
    """The MCP conformance suite's diagnostic tools, resources and prompts (scripts/conformance), declared through
    the platform's own registries so the suite exercises our dispatch, limits, audit and transports. Test-only:
    installed by `conformance_fixtures.settings` alone, never by the product's settings; a system check refuses it
    with DEBUG off, and with DEBUG off it registers nothing."""

    name = "conformance_fixtures"
    verbose_name = "MCP conformance fixtures"
    mcp_tool_group = "conformance"
    mcp_scope_permissions: tuple[str, ...] = ()

    def ready(self) -> None:
        from . import checks  # noqa: F401

        if settings.DEBUG:
            from . import prompts, resources, tools  # noqa: F401
