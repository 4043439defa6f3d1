from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LedgerConfig(AppConfig):
    name = "ledger"
    verbose_name = _("Accounting books")
    # The MCP tool group (and API-key scope) of the tools this app registers in ready().
    mcp_tool_group = "ledger"
    # What a staff member needs in the admin to give an API key this scope (docs/security.md).
    mcp_scope_permissions = ("ledger.view_account", "ledger.add_journalentry")
    # What the staff's search box finds (mcpsite/staff_search.py): a selector per model.
    staff_search = {"ledger.journalentry": "ledger.selectors.journal_entry_staff_search"}

    # Its blocks on the staff dashboard, in order (mcpsite/dashboard.py).
    dashboard_blocks = ("ledger.dashboard.ledger_block",)

    def ready(self) -> None:
        from . import prompts, resources, tools  # noqa: F401  (registers the MCP tools, resources and prompts)
