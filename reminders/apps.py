from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RemindersConfig(AppConfig):
    name = "reminders"
    verbose_name = _("Reminders (InnerVoice)")

    def ready(self) -> None:
        from . import checks, tools  # noqa: F401  (registers the system checks and the MCP tools)
        from . import prompts, resources  # noqa: F401  (registers the MCP resources and prompts)
