from django.apps import AppConfig


class GeoConfig(AppConfig):
    name = "geo"

    def ready(self) -> None:
        from . import checks, tools  # noqa: F401  (registers the system check and the MCP tools)
