from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from mcpsite.core.db import has_python_functions, python_function


class MerchantConfig(AppConfig):
    name = "merchant"
    verbose_name = _("Shop")
    # The MCP tool group (and API-key scope) of the tools this app registers in ready().
    mcp_tool_group = "merchant"
    # What a staff member needs in the admin to give an API key this scope (docs/security.md).
    mcp_scope_permissions = ("merchant.view_product",)
    # The seed's server name and version (概要: Server Name, Version), stated by /mcp/merchant and stdio --group.
    mcp_server_info = ("merchant_agent_mcp", "1.0.0")
    # What the staff's search box finds (mcpsite/staff_search.py): a selector per model.
    staff_search = {"merchant.product": "merchant.selectors.product_staff_search"}

    # Its blocks on the staff dashboard, in order (mcpsite/dashboard.py).
    dashboard_blocks = ("merchant.dashboard.sales_block", "merchant.dashboard.stock_block")

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        # System checks, index sync, the MCP tools, resources and prompts.
        from . import checks, prompts, resources, signals, tools  # noqa: F401

        connection_created.connect(_register_sqlite_functions, dispatch_uid="merchant_sqlite_functions")


def _register_sqlite_functions(sender, connection, **kwargs) -> None:
    """`merchant_gram_tokens()`, which the triggers of the short-term index call (migration 0002)."""
    if has_python_functions(connection):
        from .search_keys import gram_tokens

        connection.connection.create_function(
            "merchant_gram_tokens", 1, python_function(gram_tokens), deterministic=True
        )
