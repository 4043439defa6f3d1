from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class McpsiteConfig(AppConfig):
    name = "mcpsite"
    verbose_name = _("MCP platform")

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
