"""Reads for the OAuth admin."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils import timezone
from oauth2_provider.models import AbstractAccessToken, get_access_token_model
from oauth2_provider.settings import oauth2_settings


def live_tokens() -> QuerySet[AbstractAccessToken]:
    """Users' access tokens that still work: not expired (a revoked token is deleted). Not the registration tokens
    RFC 7592 gives a client to manage its own registration, which reach no tool."""
    live = get_access_token_model().objects.filter(expires__gt=timezone.now())
    return live.exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE)
