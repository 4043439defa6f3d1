"""A verified token acts like an API key for the platform: its user, its groups (never more than the user may use
now) and one rate allowance per user, whichever of the user's tokens is used."""

from __future__ import annotations

import pytest

from mcpsite.core.errors import InvalidAccessToken, MissingCredentials, RateLimited, ScopeDenied, Unauthorized
from mcpsite.core.limits import enforce_api_key_rate
from mcpsite.mcp import dispatch
from mcpsite.mcp.auth import api_key_authenticate
from mcpsite.mcp.registry import CallContext
from mcpsite_oauth.services import access_token_authenticate

from .live_setup import TEST_RESOURCE as URL
from .live_setup import grant_groups, mint


@pytest.mark.django_db
def test_every_token_of_a_user_shares_one_rate(django_user_model, oauth_client, settings):
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


@pytest.mark.django_db
def test_refusals_are_worded_for_the_credential_presented(django_user_model, oauth_client, api_key):  # noqa: F811
    """No credential, an API key, an OAuth token: each refusal names what was (or was not) sent; an API key's
    refusals keep the seeds' exact bodies."""
    with pytest.raises(MissingCredentials) as missing:
        api_key_authenticate(raw_key=None, url=URL)
    assert "API key or OAuth access token" in missing.value.message
    with pytest.raises(Unauthorized) as wrong_key:
        api_key_authenticate(raw_key="mcp_wrong", url=URL)
    assert wrong_key.value.message == "Invalid API key" and type(wrong_key.value) is Unauthorized
    with pytest.raises(InvalidAccessToken) as wrong_token:
        api_key_authenticate(raw_key="not-a-live-token", url=URL)
    assert wrong_token.value.message == "Invalid or expired access token"

    user = django_user_model.objects.create_user(username="hanako", password="x" * 12)
    grant_groups(user, ["cinema"])
    mint(user, oauth_client, "token-four")
    principal = access_token_authenticate(raw_token="token-four", url=URL)
    ctx = CallContext(transport="test", request_id="r1", api_key=principal, owner=user)
    with pytest.raises(ScopeDenied) as denied:
        dispatch.call_tool(ctx, "list_accounts", {})
    assert denied.value.message == "This token may not use ledger tools"
    key, _raw = api_key
    key.scopes = ["cinema"]
    ctx = CallContext(transport="test", request_id="r2", api_key=key, owner=key.owner)
    with pytest.raises(ScopeDenied) as denied:
        dispatch.call_tool(ctx, "list_accounts", {})
    assert denied.value.message == "This API key may not use ledger tools"
