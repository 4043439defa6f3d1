"""Staff see the clients users signed in and their live tokens, and revoke them; a revoked token acts no more."""

from __future__ import annotations

import hashlib

import pytest
from django.contrib.auth.models import Permission
from oauth2_provider.models import AccessToken, Application, RefreshToken

from mcpsite_oauth.services import access_token_authenticate

from .live_setup import TEST_RESOURCE as URL
from .live_setup import mint


@pytest.mark.django_db
def test_staff_list_live_tokens_and_revoke_them(admin_client, admin_user, oauth_client):
    live = mint(admin_user, oauth_client, "live-token")
    mint(admin_user, oauth_client, "old-token", expires_in=-60)
    assert access_token_authenticate(raw_token="live-token", url=URL) is not None

    page = admin_client.get("/admin/mcpsite_oauth/livetoken/")
    assert page.status_code == 200
    assert [token.pk for token in page.context["cl"].result_list] == [live.pk]  # not the expired one
    assert b"live-token" not in page.content

    response = admin_client.post(
        "/admin/mcpsite_oauth/livetoken/", {"action": "revoke", "_selected_action": [live.pk]}, follow=True
    )
    assert response.status_code == 200
    assert access_token_authenticate(raw_token="live-token", url=URL) is None
    assert RefreshToken.objects.get(token="r-live-token").revoked is not None


@pytest.mark.django_db
def test_revoking_a_client_takes_back_every_token_it_holds(admin_client, admin_user, oauth_client):
    mint(admin_user, oauth_client, "token-a")
    mint(admin_user, oauth_client, "token-b")
    page = admin_client.get("/admin/mcpsite_oauth/authorizedclient/")
    assert page.status_code == 200 and page.context["cl"].result_list[0].live_tokens == 2
    admin_client.post(
        "/admin/mcpsite_oauth/authorizedclient/", {"action": "revoke_access", "_selected_action": [oauth_client.pk]}
    )
    assert not AccessToken.objects.filter(application=oauth_client).exists()
    assert not RefreshToken.objects.filter(application=oauth_client, revoked__isnull=True).exists()
    assert Application.objects.filter(pk=oauth_client.pk).exists()  # the registration stays


@pytest.mark.django_db
def test_a_view_only_staff_member_cannot_revoke(client, django_user_model, oauth_client):
    viewer = django_user_model.objects.create_user(username="viewer", password="x" * 12, is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_livetoken"))
    token = mint(viewer, oauth_client, "viewer-token")
    client.force_login(viewer)
    assert client.get("/admin/mcpsite_oauth/livetoken/").status_code == 200
    client.post("/admin/mcpsite_oauth/livetoken/", {"action": "revoke", "_selected_action": [token.pk]})
    assert AccessToken.objects.filter(pk=token.pk).exists()


@pytest.mark.django_db
def test_a_token_lookup_by_digest_is_refused_in_the_changelist(admin_client, admin_user, oauth_client):
    mint(admin_user, oauth_client, "secret-token")
    digest = hashlib.sha256(b"secret-token").hexdigest()
    response = admin_client.get(f"/admin/mcpsite_oauth/livetoken/?token_checksum__gte={digest[:8]}")
    assert response.status_code == 400
