from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CinemaConfig(AppConfig):
    name = "cinema"
    verbose_name = _("Cinema")
    # The MCP tool group (and API-key scope) of the tools this app registers in ready().
    mcp_tool_group = "cinema"
    # What a staff member needs in the admin to give an API key this scope (docs/security.md).
    mcp_scope_permissions = ("cinema.view_schedule", "cinema.add_reservation", "cinema.change_reservation")
    # Fields staff may never filter on (mcpsite/admin_security.py).
    secret_fields = {"cinema.reservation": {"password_hash"}}
    # What the staff's search box finds (mcpsite/staff_search.py): a selector per model.
    staff_search = {"cinema.reservation": "cinema.selectors.reservation_staff_search"}

    # Its blocks on the staff dashboard, in order (mcpsite/dashboard.py).
    dashboard_blocks = ("cinema.dashboard.shows_block", "cinema.dashboard.bookings_block")

    def ready(self) -> None:
        # Registers the system check and the MCP tools, resources and prompts.
        from . import checks, prompts, resources, tools  # noqa: F401
