from django.apps import AppConfig


class McpsiteConfig(AppConfig):
    name = "mcpsite"
    verbose_name = "MCP platform"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
