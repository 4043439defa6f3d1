"""Run inside a live site (`manage.py shell -c`): the users and tokens the live OAuth tests need, printed as JSON.

Tokens are made with django-oauth-toolkit's own models, as its token endpoint stores them (digest only).
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken, set_token_value

from mcpsite.core.scopes import scope_permissions

PASSWORD = "hanako-password-123"
# The resource the Django test client's requests name (its host is testserver).
TEST_RESOURCE = "http://testserver/mcp"


def grant_groups(user, groups: list[str]) -> None:
    """The admin permissions that let `user` use these tool groups (docs/security.md, "Staff permissions")."""
    for perm in (p for group in groups for p in scope_permissions()[group]):
        app_label, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


def user_with_groups(username: str, groups: list[str]):
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, is_staff=True)
    grant_groups(user, groups)
    return user


def mint(
    user,
    application,
    raw: str,
    *,
    scope: str = "cinema",
    resource: list[str] | None = None,
    expires_in: int = 3600,
    refresh: bool = True,
) -> AccessToken:
    """An access token with (`refresh`) its refresh token "r-" + raw, as the token endpoint leaves them; for
    `resource` (default: the test client's /mcp)."""
    token = AccessToken(
        user=user,
        application=application,
        scope=scope,
        resource=[TEST_RESOURCE] if resource is None else resource,
        expires=timezone.now() + timedelta(seconds=expires_in),
    )
    set_token_value(token, raw)
    token.save()
    if refresh:
        RefreshToken.objects.create(user=user, application=application, token="r-" + raw, access_token=token)
    return token


def main(origin: str) -> None:
    hanako = user_with_groups("hanako", ["cinema", "reminders"])
    app = Application.objects.create(
        name="minted",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    mcp = origin + "/mcp"
    made = {
        "cinema": ("tok-cinema", "cinema", [mcp], 3600),
        "other_audience": ("tok-other", "cinema", ["https://other.example/mcp"], 3600),
        "unbound": ("tok-unbound", "cinema", [], 3600),
        "expired": ("tok-expired", "cinema", [mcp], -1),
        "ledger_not_allowed": ("tok-ledger", "cinema ledger", [mcp], 3600),
        "to_revoke": ("tok-revoke", "cinema", [mcp], 3600),
    }
    tokens = {}
    for kind, (raw, scope, resource, expires_in) in made.items():
        mint(hanako, app, raw, scope=scope, resource=resource, expires_in=expires_in)
        tokens[kind] = raw
    json.dump({"tokens": tokens, "user_id": hanako.pk}, sys.stdout)


def refresh_pair(origin: str) -> None:
    """An access token and its refresh token for a new client of hanako's, as the token endpoint issues them:
    prints the client id and the raw refresh token."""
    import uuid

    from oauth2_provider.models import RefreshToken

    hanako = get_user_model().objects.get(username="hanako")
    app = Application.objects.create(
        name="refreshing",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    access = mint(hanako, app, f"tok-{uuid.uuid4().hex}", resource=[origin + "/mcp"], refresh=False)
    refresh = RefreshToken(user=hanako, application=app, access_token=access, token_family=uuid.uuid4())
    raw = f"ref-{uuid.uuid4().hex}"
    set_token_value(refresh, raw)
    refresh.save()
    json.dump({"client_id": app.client_id, "refresh_token": raw}, sys.stdout)
