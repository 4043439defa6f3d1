from django.apps import AppConfig


class LedgerConfig(AppConfig):
    name = "ledger"
    verbose_name = "会計帳簿"

    def ready(self) -> None:
        from . import tools  # noqa: F401  (registers the MCP tools)
