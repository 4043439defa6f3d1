from django.apps import AppConfig


class RemindersConfig(AppConfig):
    name = "reminders"

    def ready(self) -> None:
        from . import tools  # noqa: F401  (registers the MCP tools)
