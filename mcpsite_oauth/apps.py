from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class McpsiteOAuthConfig(AppConfig):
    name = "mcpsite_oauth"
    verbose_name = _("Remote sign-in (OAuth)")
