from django.apps import AppConfig


class LedgerConfig(AppConfig):
    name = "ledger"

    def ready(self) -> None:
        from . import tools  # noqa: F401  (registers the MCP tools)
