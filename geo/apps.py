from django.apps import AppConfig


class GeoConfig(AppConfig):
    name = "geo"

    def ready(self) -> None:
        from . import tools  # noqa: F401  (registers the MCP tools)
