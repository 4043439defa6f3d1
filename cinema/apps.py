from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CinemaConfig(AppConfig):
    name = "cinema"
    verbose_name = _("Cinema")

    def ready(self) -> None:
        from . import checks, tools  # noqa: F401  (registers the system check and the MCP tools)
        from . import prompts, resources  # noqa: F401  (registers the MCP resources and prompts)
