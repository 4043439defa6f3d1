from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LedgerConfig(AppConfig):
    name = "ledger"
    verbose_name = _("Accounting books")

    def ready(self) -> None:
        from . import prompts, resources, tools  # noqa: F401  (registers the MCP tools, resources and prompts)
