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

from mcpsite.core.scopes import scopes_compact


def live_tokens() -> QuerySet[AbstractAccessToken]:
    """Users' access tokens that still work: not expired (a revoked token is deleted). Not the registration tokens
    RFC 7592 gives a client to manage its own registration, which reach no tool."""
    live = get_access_token_model().objects.filter(expires__gt=timezone.now())
    return live.exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE)


def user_connections(*, user: AbstractBaseUser) -> list[AbstractApplication]:
    """The clients that hold a live token of `user`'s, with how many, until when the latest works, and `scopes`:
    what their live tokens hold together (compacted: `ledger` for read and write)."""
    mine = live_tokens().filter(user=user)
    held: dict[int, list[str]] = {}
    for application_id, scope in mine.values_list("application_id", "scope"):
        held.setdefault(application_id, []).extend(scope.split())
    clients = list(_user_clients(mine))
    for client in clients:
        client.scopes = scopes_compact(held.get(client.pk, []))
    return clients


def _user_clients(mine: QuerySet[AbstractAccessToken]) -> QuerySet[AbstractApplication]:
    return (
        get_application_model()
        .objects.filter(pk__in=mine.values("application_id"))
        .annotate(
            tokens=Count("accesstoken", filter=Q(accesstoken__in=mine)),
            until=Max("accesstoken__expires", filter=Q(accesstoken__in=mine)),
        )
        .order_by("name", "pk")
    )
