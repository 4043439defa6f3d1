from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class McpsiteOAuthConfig(AppConfig):
    name = "mcpsite_oauth"
    verbose_name = _("Remote sign-in (OAuth)")
    # Fields staff may never filter on (mcpsite/admin_security.py).
    secret_fields = {
        "mcpsite_oauth.authorizedclient": {"client_secret"},
        "mcpsite_oauth.livetoken": {"token", "token_checksum"},
    }
