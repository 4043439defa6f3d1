from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GeoConfig(AppConfig):
    name = "geo"
    verbose_name = _("Geocoding")

    def ready(self) -> None:
        from . import checks, tools  # noqa: F401  (registers the system check and the MCP tools)
