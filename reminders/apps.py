from django.apps import AppConfig


class RemindersConfig(AppConfig):
    name = "reminders"
    verbose_name = "Reminders (InnerVoice)"

    def ready(self) -> None:
        from . import checks, tools  # noqa: F401  (registers the system checks and the MCP tools)
