"""The API key admin shows a new key on the creation response only."""

import pytest

from mcpsite.mcp.auth import api_key_authenticate
from mcpsite.models import ApiKey


@pytest.mark.django_db
def test_new_key_is_on_the_creation_response_only(admin_client, admin_user):
    response = admin_client.post(
        "/admin/mcpsite/apikey/add/",
        {"name": "voice client", "owner": admin_user.pk, "scopes": ["reminders"], "rate": "100/m", "is_active": "on"},
    )
    assert response.status_code == 200
    raw = response.context["raw_key"]
    assert api_key_authenticate(raw_key=raw) == ApiKey.objects.get(name="voice client")
    assert f'value="{raw}"' in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    # Nothing keeps it for a later page: no messages cookie, nothing in the session, not on the list or the key.
    assert all(raw not in morsel.value for morsel in response.cookies.values())
    assert raw not in str(dict(admin_client.session))
    key = ApiKey.objects.get()
    for url in ["/admin/mcpsite/apikey/", f"/admin/mcpsite/apikey/{key.pk}/change/"]:
        page = admin_client.get(url).content.decode()
        assert key.prefix in page and raw not in page


@pytest.mark.django_db
def test_an_invalid_form_creates_no_key(admin_client, admin_user):
    response = admin_client.post("/admin/mcpsite/apikey/add/", {"name": "", "owner": admin_user.pk, "rate": "100/m"})
    assert response.status_code == 200 and response.context["adminform"].form.errors
    assert not ApiKey.objects.exists()
