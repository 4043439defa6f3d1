from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MerchantConfig(AppConfig):
    name = "merchant"
    verbose_name = _("Shop")

    def ready(self) -> None:
        from . import checks, signals, tools  # noqa: F401  (system checks, index sync, the MCP tools)
