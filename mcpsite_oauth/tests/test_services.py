"""A verified token acts like an API key for the platform: its user, its groups (never more than the user may use
now) and one rate allowance per user, whichever of the user's tokens is used."""

from __future__ import annotations

import pytest

from mcpsite.core.errors import RateLimited
from mcpsite.core.limits import enforce_api_key_rate
from mcpsite_oauth.services import access_token_authenticate

from .live_setup import grant_groups
from .test_admin import URL, mint, oauth_client  # noqa: F401  (the fixture)


@pytest.mark.django_db
def test_every_token_of_a_user_shares_one_rate(django_user_model, oauth_client, settings):  # noqa: F811
    settings.OAUTH_TOKEN_RATE = "2/m"
    user = django_user_model.objects.create_user(username="hanako", password="x" * 12)
    grant_groups(user, ["cinema"])
    mint(user, oauth_client, "token-one")
    mint(user, oauth_client, "token-two")
    first = access_token_authenticate(raw_token="token-one", url=URL)
    second = access_token_authenticate(raw_token="token-two", url=URL)
    enforce_api_key_rate(first)
    enforce_api_key_rate(second)
    with pytest.raises(RateLimited):
        enforce_api_key_rate(first)


@pytest.mark.django_db
def test_a_token_gives_only_the_groups_its_user_may_use_now(django_user_model, oauth_client):  # noqa: F811
    user = django_user_model.objects.create_user(username="hanako", password="x" * 12)
    grant_groups(user, ["cinema", "reminders"])
    token = mint(user, oauth_client, "token-three")
    token.scope = "cinema reminders ledger"
    token.save()
    principal = access_token_authenticate(raw_token="token-three", url=URL)
    assert principal.scopes == ("cinema", "reminders") and principal.owner == user
    user.user_permissions.clear()
    assert access_token_authenticate(raw_token="token-three", url=URL).scopes == ()
    assert access_token_authenticate(raw_token="token-three", url="http://testserver/rpc") is None
