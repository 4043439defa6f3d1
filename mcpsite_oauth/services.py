"""Remote sign-in: which resource tokens are for, who a token acts as, and revoking what staff revoke.

django-oauth-toolkit issues the tokens (authorization code + PKCE S256, refresh rotation, client registration);
this module holds the project's rules around them: a token is bound to this site's MCP resource (RFC 8707) and
gives at most the scopes (tool groups, read, write or both) of the groups its user may use now.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
    revoke_access_token,
)
from oauth2_provider.settings import oauth2_settings

from mcpsite.admin_security import grantable_scopes
from mcpsite.core.scopes import all_scopes, scope_group, scopes_allow, scopes_compact, tool_groups

from .models import RedeemedCode, token_checksum

MCP_PATH = "/mcp"


def site_origin(*, request: HttpRequest) -> str:
    """This site as its clients reach it (OAUTH_ISSUER_URL, else the request's scheme and host)."""
    return settings.OAUTH_ISSUER_URL or request.build_absolute_uri("/").rstrip("/")


def mcp_resources(*, origin: str) -> tuple[str, str]:
    """The resource identifiers a token may be bound to: `/mcp` (every MCP endpoint is under it) and the site itself
    (what the root protected resource metadata names)."""
    return (origin + MCP_PATH, origin)


def scopes_for_user(*, user: AbstractBaseUser, requested: Iterable[str]) -> tuple[list[str], list[str]]:
    """The requested scopes `user` may hold (compacted: `scopes.scopes_compact`), and the groups of those they may
    not: the rule for API keys (docs/security.md, "Staff permissions"), group by group. Unknown scopes are left
    out."""
    allowed = grantable_scopes(user)
    known = [scope for scope in requested if scope in all_scopes()]
    wanted = scopes_compact(known)
    refused = [group for group in tool_groups() if scopes_allow(wanted, group) and group not in allowed]
    return [scope for scope in wanted if scope_group(scope) in allowed], refused


@dataclass(frozen=True, slots=True)
class OAuthTokenPrincipal:
    """A verified access token, in the shape the MCP platform expects of an ApiKey (owner, scopes, rate, allows,
    audit_fields). Rate-limited per user: a refreshed token or a second client shares the user's allowance."""

    token_id: int
    application_id: int
    owner: Any
    scopes: tuple[str, ...]
    rate: str
    kind: str = "oauth"

    @property
    def pk(self) -> str:
        return f"oauth-user:{self.owner.pk}"

    @property
    def digest(self) -> str:
        # What binds a stateful MCP session to its opener: the user and client, not the token, which rotates.
        return f"oauth:{self.owner.pk}:{self.application_id}"

    def allows(self, group: str, mode: str | None = None) -> bool:
        return scopes_allow(self.scopes, group, mode)

    def may_step_up(self, group: str) -> bool:
        """Whether the user could grant this client `group` if asked again: a scope they may not use is no reason
        to send the client back to them."""
        return group in grantable_scopes(self.owner)

    def audit_fields(self) -> dict:
        return {"user_id": self.owner.pk, "oauth_client_id": self.application_id}


def access_token_authenticate(*, raw_token: str, url: str) -> OAuthTokenPrincipal | None:
    """The principal of a live access token bound to a resource that covers `url`; None for anything else (unknown,
    expired, revoked, another audience, no user): the transport answers 401 invalid_token."""
    token = (
        get_access_token_model()
        .objects.select_related("user", "application")
        .filter(token_checksum=token_checksum(raw_token))
        .first()
    )
    if token is None or token.is_expired() or token.user is None or not token.user.is_active:
        return None
    # RFC 8707: only tokens issued for this resource; an unbound token could have been meant for anyone.
    if not token.resource or not token.allows_audience(url.split("?")[0]):
        return None
    allowed, _ = scopes_for_user(user=token.user, requested=token.scope.split())
    return OAuthTokenPrincipal(
        token_id=token.pk,
        application_id=token.application_id,
        owner=token.user,
        scopes=tuple(allowed),
        rate=settings.OAUTH_TOKEN_RATE,
    )


def access_tokens_revoke(*, token_ids: Iterable[int]) -> int:
    """Revoke access tokens and their refresh tokens; the next request with one is refused. Returns how many."""
    count = 0
    with transaction.atomic():
        for token in get_access_token_model().objects.filter(pk__in=list(token_ids)).select_for_update():
            revoke_access_token(token)
            count += 1
    return count


def client_access_revoke(*, application_ids: Iterable[int], user: AbstractBaseUser | None = None) -> int:
    """Take back everything the given clients were granted (by `user` only, when given): access and refresh tokens
    and unused codes. The registrations stay (a user may sign the client in again). Returns how many access tokens
    were revoked."""
    mine = {"application_id__in": list(application_ids), **({"user": user} if user is not None else {})}
    tokens = get_access_token_model().objects.filter(**mine)
    with transaction.atomic():
        count = access_tokens_revoke(token_ids=tokens.values_list("pk", flat=True))
        # Refresh tokens whose access token is already gone (rotated) still exchange for new ones: revoke them too.
        for refresh in get_refresh_token_model().objects.filter(**mine, revoked__isnull=True):
            refresh.revoke()
        get_grant_model().objects.filter(**mine).delete()
    return count


def unused_clients_prune(*, older_than_hours: int) -> int:
    """Delete clients that registered themselves (RFC 7591) more than `older_than_hours` ago and have nothing to show
    for an authorization: no code, no user's access or refresh token (expired ones count once `cleartokens` has
    removed them). Also forgets redeemed codes older than a refresh token lives. Returns how many clients."""
    if older_than_hours < 1:
        raise ValueError("older_than_hours must be at least 1")
    application_model = get_application_model()
    now = timezone.now()
    user_tokens = get_access_token_model().objects.exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE)
    unused = (
        application_model.objects.filter(
            registration_source=application_model.RegistrationSource.DCR,
            created__lt=now - timedelta(hours=older_than_hours),
        )
        .exclude(pk__in=user_tokens.values("application_id"))
        .exclude(pk__in=get_refresh_token_model().objects.values("application_id"))
        .exclude(pk__in=get_grant_model().objects.values("application_id"))
    )
    with transaction.atomic():
        ids = list(unused.values_list("pk", flat=True))
        application_model.objects.filter(pk__in=ids).delete()
        forget_before = now - timedelta(seconds=oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS)
        RedeemedCode.objects.filter(redeemed_at__lt=forget_before).delete()
    return len(ids)
