from django.apps import AppConfig


class CinemaConfig(AppConfig):
    name = "cinema"
    verbose_name = "Cinema"

    def ready(self) -> None:
        from . import checks, tools  # noqa: F401  (registers the system check and the MCP tools)
