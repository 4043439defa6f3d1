from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CinemaConfig(AppConfig):
    name = "cinema"
    verbose_name = _("Cinema")

    def ready(self) -> None:
        # Registers the system check and the MCP tools, resources and prompts.
        from . import checks, prompts, resources, tools  # noqa: F401
