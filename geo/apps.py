from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GeoConfig(AppConfig):
    name = "geo"
    verbose_name = _("Geocoding")
    # The MCP tool group (and API-key scope) of the tools this app registers in ready().
    mcp_tool_group = "geo"
    # What a staff member needs in the admin to give an API key this scope (docs/security.md).
    mcp_scope_permissions = ("geo.add_pointlookup",)

    def ready(self) -> None:
        from . import checks, tools  # noqa: F401  (registers the system check and the MCP tools)
