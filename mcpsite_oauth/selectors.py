"""Reads for the OAuth admin."""

from __future__ import annotations

from django.utils import timezone
from oauth2_provider.models import get_access_token_model


def live_tokens():
    """Access tokens that still work: not expired (a revoked token is deleted)."""
    return get_access_token_model().objects.filter(expires__gt=timezone.now())
