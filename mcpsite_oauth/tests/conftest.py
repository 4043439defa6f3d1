import pytest
from oauth2_provider.models import Application


@pytest.fixture
def oauth_client(db):
    return Application.objects.create(
        name="Claude",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1:1/cb",
    )
