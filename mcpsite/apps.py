from django.apps import AppConfig


class McpsiteConfig(AppConfig):
    name = "mcpsite"
    verbose_name = "MCP platform"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
        from .logfilters import install_on_access_loggers

        install_on_access_loggers()
