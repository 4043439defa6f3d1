from django.apps import AppConfig


class CinemaConfig(AppConfig):
    name = "cinema"

    def ready(self) -> None:
        from . import tools  # noqa: F401  (registers the MCP tools)
