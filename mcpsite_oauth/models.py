"""The admin's view of django-oauth-toolkit's records: the clients users authorized and the tokens they hold.

Proxies, so they are listed under this app with the staff's language; the tables are the toolkit's.
"""

from django.utils.translation import gettext_lazy as _
from oauth2_provider.models import AccessToken, Application


class AuthorizedClient(Application):
    class Meta:
        proxy = True
        verbose_name = _("OAuth client")
        verbose_name_plural = _("OAuth clients")


class LiveToken(AccessToken):
    class Meta:
        proxy = True
        verbose_name = _("access token")
        verbose_name_plural = _("access tokens")
