from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RemindersConfig(AppConfig):
    name = "reminders"
    verbose_name = _("Reminders (InnerVoice)")

    def ready(self) -> None:
        # Registers the system checks and the MCP tools, resources and prompts.
        from . import checks, prompts, resources, tools  # noqa: F401
