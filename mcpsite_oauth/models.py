"""The admin's view of django-oauth-toolkit's records: the clients users authorized and the tokens they hold.

Proxies, so they are listed under this app with the staff's language; the tables are the toolkit's.
"""

import hashlib

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from oauth2_provider.models import AccessToken, Application


def token_checksum(raw: str) -> str:
    """How a token or code is looked up without storing it: the SHA-256 hex digest the toolkit keeps in its tokens'
    `token_checksum` (and RedeemedCode keeps in `code_digest`)."""
    return hashlib.sha256(raw.encode()).hexdigest()


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

    def __str__(self) -> str:
        # The toolkit's "AccessToken #<pk>", in the staff's language; never the token itself.
        return _("Access token #%(pk)s") % {"pk": self.pk}


class RedeemedCode(models.Model):
    """An authorization code that was exchanged, and the token family it started: a second exchange of the code
    revokes that family (RFC 6749 §4.1.2), since the code has leaked. Only the code's SHA-256 digest is kept."""

    code_digest = models.CharField(max_length=64, unique=True)
    application = models.ForeignKey("oauth2_provider.Application", on_delete=models.CASCADE, related_name="+")
    token_family = models.UUIDField(null=True)
    redeemed_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = _("redeemed authorization code")
        verbose_name_plural = _("redeemed authorization codes")

    def __str__(self) -> str:
        return f"{self.application_id}:{self.code_digest[:12]}"
