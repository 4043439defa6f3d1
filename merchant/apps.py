from django.apps import AppConfig


class MerchantConfig(AppConfig):
    name = "merchant"

    def ready(self) -> None:
        from . import tools  # noqa: F401  (registers the MCP tools)
