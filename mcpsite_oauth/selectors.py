"""Reads for the OAuth admin and the user's page of connected clients."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone
from oauth2_provider.models import (
    AbstractAccessToken,
    AbstractApplication,
    get_access_token_model,
    get_application_model,
)
from oauth2_provider.settings import oauth2_settings


def live_tokens() -> QuerySet[AbstractAccessToken]:
    """Users' access tokens that still work: not expired (a revoked token is deleted). Not the registration tokens
    RFC 7592 gives a client to manage its own registration, which reach no tool."""
    live = get_access_token_model().objects.filter(expires__gt=timezone.now())
    return live.exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE)


def user_connections(*, user: AbstractBaseUser) -> QuerySet[AbstractApplication]:
    """The clients that hold a live token of `user`'s, with how many and until when the latest works."""
    mine = live_tokens().filter(user=user)
    return (
        get_application_model()
        .objects.filter(pk__in=mine.values("application_id"))
        .annotate(
            tokens=Count("accesstoken", filter=Q(accesstoken__in=mine)),
            until=Max("accesstoken__expires", filter=Q(accesstoken__in=mine)),
        )
        .order_by("name", "pk")
    )
