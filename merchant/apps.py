from django.apps import AppConfig


class MerchantConfig(AppConfig):
    name = "merchant"

    def ready(self) -> None:
        from . import checks, signals, tools  # noqa: F401  (system checks, index sync, the MCP tools)
