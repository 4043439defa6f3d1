from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RemindersConfig(AppConfig):
    name = "reminders"
    verbose_name = _("Reminders (InnerVoice)")
    # The MCP tool group (and API-key scope) of the tools this app registers in ready().
    mcp_tool_group = "reminders"
    # What a staff member needs in the admin to give an API key this scope (docs/security.md).
    mcp_scope_permissions = ("reminders.add_event", "reminders.add_message", "reminders.add_reminder")
    # Fields staff may never filter on (mcpsite/admin_security.py).
    secret_fields = {"reminders.profile": {"webhook_url", "feed_token"}}

    # Its blocks on the staff dashboard, in order (mcpsite/dashboard.py).
    dashboard_blocks = ("reminders.dashboard.reminders_block",)

    def ready(self) -> None:
        # Registers the system checks and the MCP tools, resources and prompts.
        from . import checks, prompts, resources, tools  # noqa: F401
