"""The authorization server's refusals, each with the spec's error (RFC 6749 §4.1.2.1 and §5.2, RFC 7636, RFC 7591,
RFC 8707), and what a consent grants. In process with Django's test client."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import socket
from urllib.parse import parse_qs, urlsplit

import pytest
from oauth2_provider.models import Application

from mcpsite_oauth.selectors import live_tokens

from .live_setup import grant_groups

REDIRECT = "http://127.0.0.1:8765/callback"
RESOURCE = "http://testserver/mcp"


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def register(client, remote_addr="127.0.0.1", **metadata):
    body = {
        "client_name": "テスト",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    return client.post("/oauth/register/", json.dumps(body), content_type="application/json", REMOTE_ADDR=remote_addr)


@pytest.fixture
def hanako(django_user_model):
    user = django_user_model.objects.create_user(username="hanako", password="hanako-password-123")
    grant_groups(user, ["cinema"])
    return user


@pytest.fixture
def app_client_id(client):
    response = register(client)
    assert response.status_code == 201, response.content
    return response.json()["client_id"]


@pytest.fixture
def signed_in(client, hanako):
    client.force_login(hanako)
    return client


def authorize_params(client_id, challenge, **extra):
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "scope": "cinema",
        "state": "s1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": RESOURCE,
    }
    return {k: v for k, v in {**params, **extra}.items() if v is not None}


def redirect_query(response) -> dict:
    assert response.status_code == 302, response.content[:500]
    location = response["Location"]
    assert location.startswith(REDIRECT), location
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def consent(client, client_id, challenge, groups=("cinema",), allow=True, tamper=None, **extra):
    """GET the consent page, then POST its form as the user would (with `tamper` changing hidden fields)."""
    page = client.get("/oauth/authorize/", authorize_params(client_id, challenge, **extra))
    assert page.status_code == 200, page.content[:500]
    data = {k: v for k, v in page.context["form"].initial.items() if v is not None}
    data.update(tamper or {}, groups=list(groups), authorization_request=page.context["authorization_request"])
    if allow:
        data["allow"] = "許可する"
    return client.post("/oauth/authorize/", data)


def token(client, **data):
    return client.post("/oauth/token/", data)


def exchange(client, client_id, code, verifier, **extra):
    """The token request for an authorization code (RFC 6749 §4.1.3 with the PKCE verifier)."""
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": client_id,
        "code_verifier": verifier,
        "resource": RESOURCE,
        **extra,
    }
    return token(client, **{k: v for k, v in data.items() if v is not None})


@pytest.mark.django_db
def test_a_consent_gives_a_code_that_pkce_turns_into_an_audience_bound_token(signed_in, app_client_id):
    verifier, challenge = pkce()
    query = redirect_query(consent(signed_in, app_client_id, challenge))
    assert query["state"] == "s1" and query["iss"] == "http://testserver"
    response = exchange(signed_in, app_client_id, query["code"], verifier)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["scope"] == "cinema" and body["token_type"] == "Bearer" and body["refresh_token"]
    stored = live_tokens().get()
    assert stored.resource == [RESOURCE] and stored.user.username == "hanako"
    assert stored.token == ""  # only a digest is kept (RFC 9700 token storage)


@pytest.mark.django_db
def test_pkce_missing_or_plain_is_invalid_request(signed_in, app_client_id):
    missing = signed_in.get("/oauth/authorize/", authorize_params(app_client_id, None, code_challenge_method=None))
    assert redirect_query(missing)["error"] == "invalid_request"
    _, challenge = pkce()
    plain = signed_in.get(
        "/oauth/authorize/", authorize_params(app_client_id, challenge, code_challenge_method="plain")
    )
    assert redirect_query(plain)["error"] == "invalid_request"


@pytest.mark.django_db
@pytest.mark.parametrize("verifier", ["wrong-verifier-" + "x" * 40, None])
def test_a_wrong_or_missing_code_verifier_is_refused_at_the_token_endpoint(signed_in, app_client_id, verifier):
    _, challenge = pkce()
    query = redirect_query(consent(signed_in, app_client_id, challenge))
    response = exchange(signed_in, app_client_id, query["code"], verifier)
    assert response.status_code == 400
    assert response.json()["error"] == ("invalid_grant" if verifier else "invalid_request")
    assert not live_tokens().exists()


@pytest.mark.django_db
def test_a_redirect_uri_not_registered_is_never_redirected_to(signed_in, app_client_id):
    _, challenge = pkce()
    params = authorize_params(app_client_id, challenge, redirect_uri="http://127.0.0.1:8765/elsewhere")
    response = signed_in.get("/oauth/authorize/", params)
    assert response.status_code == 400 and "Location" not in response
    assert response.context["error"].error == "invalid_request"


@pytest.mark.django_db
def test_scopes_beyond_the_users_groups_are_left_out_or_refused(signed_in, app_client_id):
    _, challenge = pkce()
    # Nothing the user may use: a page saying why, whose link (and timed refresh) gives the client invalid_scope.
    only_ledger = signed_in.get("/oauth/authorize/", authorize_params(app_client_id, challenge, scope="ledger"))
    assert only_ledger.status_code == 403
    back = parse_qs(urlsplit(only_ledger.context["return_url"]).query)
    assert only_ledger.context["return_url"].startswith(REDIRECT)
    assert back["error"] == ["invalid_scope"] and back["state"] == ["s1"]
    # Some: the page offers those and names the rest as left out.
    page = signed_in.get("/oauth/authorize/", authorize_params(app_client_id, challenge, scope="cinema ledger"))
    assert [g for g, _description, _modes in page.context["groups"]] == ["cinema"]
    assert [g for g, _ in page.context["refused_groups"]] == ["ledger"]
    assert page.context["form"].initial["scope"] == "cinema"
    # A forged POST for ledger is refused, whether or not the hidden scope field was changed too.
    forged = consent(signed_in, app_client_id, challenge, groups=("cinema", "ledger"), scope="cinema ledger")
    assert redirect_query(forged)["error"] == "invalid_scope"
    tampered = consent(signed_in, app_client_id, challenge, groups=("ledger",), tamper={"scope": "cinema ledger"})
    assert redirect_query(tampered)["error"] == "invalid_scope"
    assert not live_tokens().exists()


@pytest.mark.django_db
def test_deny_is_access_denied(signed_in, app_client_id):
    _, challenge = pkce()
    assert redirect_query(consent(signed_in, app_client_id, challenge, allow=False))["error"] == "access_denied"


@pytest.mark.django_db
def test_a_resource_that_is_not_this_mcp_server_is_invalid_target(signed_in, app_client_id):
    verifier, challenge = pkce()
    other = signed_in.get(
        "/oauth/authorize/", authorize_params(app_client_id, challenge, resource="https://evil.example/mcp")
    )
    assert redirect_query(other)["error"] == "invalid_target"
    # Nor can the token request widen the audience the code was granted for.
    query = redirect_query(consent(signed_in, app_client_id, challenge))
    response = exchange(signed_in, app_client_id, query["code"], verifier, resource="https://evil.example/mcp")
    # (django-oauth-toolkit 3.4.1 labels this one JSON answer text/html.)
    assert response.status_code == 400 and json.loads(response.content)["error"] == "invalid_target"


@pytest.mark.django_db
def test_a_client_that_names_no_resource_gets_a_token_for_this_mcp_server(signed_in, app_client_id):
    verifier, challenge = pkce()
    query = redirect_query(consent(signed_in, app_client_id, challenge, resource=None))
    response = exchange(signed_in, app_client_id, query["code"], verifier, resource=None)
    assert response.status_code == 200
    assert live_tokens().get().resource == [RESOURCE]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"grant_types": ["client_credentials"]}, "invalid_client_metadata"),
        ({"grant_types": ["password"]}, "invalid_client_metadata"),
        ({"response_types": ["token"]}, "invalid_client_metadata"),
        ({"redirect_uris": ["http://app.example/callback"]}, "invalid_redirect_uri"),
    ],
)
def test_registration_is_for_authorization_code_clients_with_safe_redirects(client, metadata, error):
    response = register(client, **metadata)
    assert response.status_code == 400 and response.json()["error"] == error
    assert not Application.objects.exists()


@pytest.mark.django_db
def test_registration_answers_a_public_client(client):
    body = register(client).json()
    assert body["token_endpoint_auth_method"] == "none" and "client_secret" not in body
    assert body["redirect_uris"] == [REDIRECT]


@pytest.mark.django_db
def test_an_http_redirect_to_another_host_is_refused_even_for_a_client_registered_by_hand(signed_in):
    app = Application.objects.create(
        name="hand-made",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://app.example/callback",
    )
    _, challenge = pkce()
    params = authorize_params(app.client_id, challenge, redirect_uri="http://app.example/callback")
    response = signed_in.get("/oauth/authorize/", params)
    assert response.status_code == 400 and "Location" not in response


@pytest.fixture
def no_network(monkeypatch):
    """Every name lookup and connection this process attempts, recorded and refused in process: nothing leaves it."""
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args[:2])
        raise socket.gaierror(socket.EAI_NONAME, "refused by the test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


def _present_a_metadata_document_url(client) -> list:
    """What a stranger can do: an https client_id at the token and authorization endpoints."""
    url = "https://client.example/oauth-client.json"
    exchange = {"grant_type": "authorization_code", "code": "x", "client_id": url,
                "redirect_uri": "https://client.example/cb", "code_verifier": "v" * 43}  # fmt: skip
    token = client.post("/oauth/token/", exchange)
    _, challenge = pkce()
    authorize = client.get(
        "/oauth/authorize/", authorize_params(url, challenge, redirect_uri="https://client.example/cb")
    )
    return [token.status_code, authorize.status_code]


@pytest.mark.django_db
def test_client_metadata_documents_are_off_and_never_fetched(signed_in, no_network):
    """Issue #37: a POST to /oauth/token/ with an https client_id made the server fetch it, by an address rule other
    than the site's, and the client it made escaped the registration limit and pruning. CIMD is off."""
    metadata = signed_in.get("/.well-known/oauth-authorization-server").json()
    assert metadata["client_id_metadata_document_supported"] is False
    token_status, authorize_status = _present_a_metadata_document_url(signed_in)
    assert token_status == 401 and authorize_status == 400
    assert no_network == [] and not Application.objects.exists()


@pytest.mark.django_db
def test_control_with_cimd_on_the_same_requests_make_the_server_fetch(signed_in, no_network, settings):
    """The control: the toolkit's CIMD on, the same requests reach for the client's host (refused in process)."""
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_ENABLED": True}
    _present_a_metadata_document_url(signed_in)
    assert ("client.example", 443) in no_network


def tokens_for(client, client_id) -> dict:
    """A consent and its code exchange: the token response."""
    verifier, challenge = pkce()
    query = redirect_query(consent(client, client_id, challenge))
    response = exchange(client, client_id, query["code"], verifier)
    assert response.status_code == 200, response.content
    return response.json()


def refresh(client, client_id, refresh_token):
    return token(client, grant_type="refresh_token", refresh_token=refresh_token, client_id=client_id)


@pytest.mark.django_db
def test_a_code_exchanged_twice_revokes_the_tokens_it_gave(signed_in, app_client_id):
    """RFC 6749 §4.1.2: the second exchange is refused, and the tokens of the first (and those refreshed from
    them) stop working, since the code has leaked."""
    verifier, challenge = pkce()
    code = redirect_query(consent(signed_in, app_client_id, challenge))["code"]
    first = exchange(signed_in, app_client_id, code, verifier)
    assert first.status_code == 200
    refreshed = refresh(signed_in, app_client_id, first.json()["refresh_token"])
    assert refreshed.status_code == 200 and live_tokens().count() == 1
    second = exchange(signed_in, app_client_id, code, verifier)
    assert second.status_code == 400 and second.json()["error"] == "invalid_grant"
    assert not live_tokens().exists()
    again = refresh(signed_in, app_client_id, refreshed.json()["refresh_token"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


@pytest.mark.django_db
def test_a_deactivated_users_refresh_token_gives_nothing(signed_in, app_client_id, hanako):
    issued = tokens_for(signed_in, app_client_id)
    hanako.is_active = False
    hanako.save()
    response = refresh(signed_in, app_client_id, issued["refresh_token"])
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"
    assert live_tokens().count() == 1  # only the first, which /mcp refuses for an inactive user


@pytest.mark.django_db
def test_a_deactivated_users_code_gives_nothing(signed_in, app_client_id, hanako):
    verifier, challenge = pkce()
    code = redirect_query(consent(signed_in, app_client_id, challenge))["code"]
    hanako.is_active = False
    hanako.save()
    response = exchange(signed_in, app_client_id, code, verifier)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"
    assert not live_tokens().exists()


@pytest.mark.django_db
@pytest.mark.parametrize("body", ["[" * 100_000, '{"client_name": ' + "[" * 5000 + "]" * 5000 + "}", "null", "[]"])
def test_registration_with_a_body_that_is_no_json_object_is_invalid_client_metadata(client, body):
    response = client.post("/oauth/register/", body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"] == "invalid_client_metadata"
    assert not Application.objects.exists()


@pytest.mark.django_db
def test_registration_is_bounded(client, settings):
    many = register(client, redirect_uris=[f"http://127.0.0.1:{8000 + i}/cb" for i in range(11)])
    assert many.status_code == 400 and many.json()["error"] == "invalid_redirect_uri"
    large = register(client, client_name="x" * settings.OAUTH_REGISTRATION_MAX_BYTES)
    assert large.status_code == 400 and large.json()["error"] == "invalid_client_metadata"
    assert not Application.objects.exists()
    assert register(client, redirect_uris=[f"http://127.0.0.1:{8000 + i}/cb" for i in range(10)]).status_code == 201


@pytest.mark.django_db
def test_registration_is_limited_per_client_address(client, settings):
    settings.OAUTH_REGISTRATION_RATE = "3/h"
    assert [register(client).status_code for _ in range(4)] == [201, 201, 201, 429]
    assert register(client).json()["error"] == "too_many_requests"
    assert register(client, remote_addr="192.0.2.7").status_code == 201  # another address has its own allowance
    assert Application.objects.count() == 4


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": ["http://evil.com/cb"]}, "invalid_redirect_uri"),
        ({"grant_types": ["client_credentials"]}, "invalid_client_metadata"),
        ({"response_types": ["token"]}, "invalid_client_metadata"),
        ({"redirect_uris": [f"http://127.0.0.1:{8000 + i}/cb" for i in range(11)]}, "invalid_redirect_uri"),
    ],
)
def test_an_update_of_a_registration_obeys_registrations_rules(client, metadata, error):
    """RFC 7592 PUT with the registration access token: the same refusals as registration, nothing changed."""
    registered = register(client).json()
    body = {
        "client_id": registered["client_id"],
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    response = client.put(
        registered["registration_client_uri"],
        json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {registered['registration_access_token']}"},
    )
    assert response.status_code == 400 and response.json()["error"] == error
    app = Application.objects.get(client_id=registered["client_id"])
    assert app.redirect_uris == REDIRECT and app.authorization_grant_type == Application.GRANT_AUTHORIZATION_CODE
    # A conforming update goes through.
    body = {**body, "redirect_uris": [REDIRECT, "https://app.example/cb"], "grant_types": ["authorization_code"]}
    body["response_types"] = ["code"]
    updated = client.put(
        registered["registration_client_uri"],
        json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {registered['registration_access_token']}"},
    )
    assert updated.status_code == 200, updated.content


@pytest.mark.django_db
def test_prune_deletes_old_registrations_that_never_completed_an_authorization(signed_in, app_client_id):
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    tokens_for(signed_in, app_client_id)  # this one completed an authorization
    unused = register(signed_in).json()["client_id"]
    recent = register(signed_in).json()["client_id"]
    old = timezone.now() - timedelta(hours=25)
    Application.objects.exclude(client_id=recent).update(created=old)
    call_command("prune_oauth_clients", verbosity=0)
    assert set(Application.objects.values_list("client_id", flat=True)) == {app_client_id, recent}
    assert unused not in set(Application.objects.values_list("client_id", flat=True))


@pytest.mark.django_db
@pytest.mark.parametrize("tamper", [{"code_challenge": ""}, {"code_challenge": "", "code_challenge_method": ""}])
def test_the_pkce_challenge_is_bound_at_authorize_time_not_by_the_form(signed_in, app_client_id, tamper):
    """Emptying the consent form's hidden challenge changes nothing: the code is bound to the challenge the
    client sent, so only its verifier redeems it."""
    verifier, challenge = pkce()
    code = redirect_query(consent(signed_in, app_client_id, challenge, tamper=tamper))["code"]
    wrong = exchange(signed_in, app_client_id, code, "wrong-verifier-" + "x" * 40)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    missing = exchange(signed_in, app_client_id, code, None)
    assert missing.status_code == 400 and missing.json()["error"] == "invalid_request"
    assert not live_tokens().exists()


@pytest.mark.django_db
def test_the_other_hidden_fields_are_bound_too(signed_in, app_client_id):
    verifier, challenge = pkce()
    tamper = {"state": "forged", "resource": "https://evil.example/mcp", "redirect_uri": "http://127.0.0.1:1/x"}
    query = redirect_query(consent(signed_in, app_client_id, challenge, tamper=tamper))
    assert query["state"] == "s1"
    assert exchange(signed_in, app_client_id, query["code"], verifier).status_code == 200
    assert live_tokens().get().resource == [RESOURCE]


@pytest.mark.django_db
def test_a_consent_form_is_answered_once(signed_in, app_client_id):
    _, challenge = pkce()
    page = signed_in.get("/oauth/authorize/", authorize_params(app_client_id, challenge))
    data = {k: v for k, v in page.context["form"].initial.items() if v is not None}
    data.update(groups=["cinema"], allow="許可する", authorization_request=page.context["authorization_request"])
    assert signed_in.post("/oauth/authorize/", data).status_code == 302
    again = signed_in.post("/oauth/authorize/", data)
    assert again.status_code == 400 and "Location" not in again
    forged = signed_in.post("/oauth/authorize/", {**data, "authorization_request": "made-up"})
    assert forged.status_code == 400 and "Location" not in forged


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("language", "says", "comma"),
    [("en", "may not use any of the tool groups", ", "), ("ja", "利用できるツールグループがない", "、")],
)
def test_the_pages_say_what_and_why_in_the_users_language(signed_in, app_client_id, language, says, comma):
    signed_in.cookies["django_language"] = language
    _, challenge = pkce()
    page = signed_in.get("/oauth/authorize/", authorize_params(app_client_id, challenge, scope="ledger geo"))
    text = page.content.decode()
    assert page.status_code == 403 and says in text and "Django" not in text
    # The consent page: lifetimes, how to take access back, left-out groups joined the reader's way.
    consent_page = signed_in.get(
        "/oauth/authorize/", authorize_params(app_client_id, challenge, scope="cinema ledger geo")
    )
    descriptions = [str(description) for _, description in consent_page.context["refused_groups"]]
    assert len(descriptions) == 2 and consent_page.context["refused_text"] == comma.join(descriptions)
    text = consent_page.content.decode()
    assert consent_page.context["access_lifetime"] in text and consent_page.context["refresh_lifetime"] in text
    assert 'id="how-to-revoke"' in text and "Django" not in text


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("language", "access", "refresh", "english"),
    [("ja", "1時間", "30日", False), ("en", "1 hour", "30 days", True)],
)
def test_the_consent_page_says_the_lifetimes_as_a_person_writes_them(
    signed_in, app_client_id, language, access, refresh, english
):
    """Issue #37: 30 days read "4週間, 2日" (timesince's weeks); the page is in the reader's language throughout."""
    signed_in.cookies["django_language"] = language
    _, challenge = pkce()
    page = signed_in.get("/oauth/authorize/", authorize_params(app_client_id, challenge, scope="cinema"))
    assert (page.context["access_lifetime"], page.context["refresh_lifetime"]) == (access, refresh)
    lifetimes = re.sub(r"\s+", " ", re.search(r'<p id="token-lifetime">(.*?)</p>', page.content.decode(), re.S)[1])
    assert access in lifetimes and refresh in lifetimes and "週" not in lifetimes
    assert ("The client gets an access token" in lifetimes) == english


@pytest.mark.django_db
def test_the_sign_in_page_says_what_the_user_signs_in_to(client):
    client.cookies["django_language"] = "en"
    page = client.get("/oauth/login/?next=/oauth/authorize/")
    text = page.content.decode()
    assert "mcpsite: sign in for an MCP client" in text and "Django administration" not in text
    assert "connect an MCP client" in text


@pytest.mark.django_db
def test_a_user_sees_and_revokes_their_connected_clients(signed_in, app_client_id, django_user_model):
    issued = tokens_for(signed_in, app_client_id)
    other = django_user_model.objects.create_user(username="taro", password="taro-password-123")
    grant_groups(other, ["cinema"])
    from django.test import Client

    taro = Client()
    taro.force_login(other)
    tokens_for(taro, app_client_id)
    page = signed_in.get("/oauth/connections/")
    assert [c.client_id for c, _held in page.context["connections"]] == [app_client_id]
    client_pk = page.context["connections"][0][0].pk
    assert signed_in.post("/oauth/connections/", {"client": client_pk}).status_code == 302
    assert list(live_tokens().values_list("user__username", flat=True)) == ["taro"]  # only hanako's went
    again = refresh(signed_in, app_client_id, issued["refresh_token"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert not signed_in.get("/oauth/connections/").context["connections"]


def test_the_connections_page_needs_a_sign_in(client):
    response = client.get("/oauth/connections/")
    assert response.status_code == 302 and response["Location"].startswith("/oauth/login/")


# --- least privilege: the person grants read without write ---------------------------------------------------------


@pytest.mark.django_db
def test_the_person_may_grant_a_groups_read_without_its_write(signed_in, app_client_id):
    verifier, challenge = pkce()
    page = signed_in.get("/oauth/authorize/", authorize_params(app_client_id, challenge, scope="cinema"))
    (row,) = page.context["groups"]
    assert [scope for scope, _label in row[2]] == ["cinema:read", "cinema:write"]
    assert 'value="cinema:read" checked' in page.content.decode() and "参照" in page.content.decode()
    query = redirect_query(consent(signed_in, app_client_id, challenge, groups=("cinema:read",)))
    issued = exchange(signed_in, app_client_id, query["code"], verifier)
    assert issued.status_code == 200 and issued.json()["scope"] == "cinema:read"
    # Both boxes: the bare group, as before scopes had modes.
    verifier, challenge = pkce()
    both = redirect_query(consent(signed_in, app_client_id, challenge, groups=("cinema:read", "cinema:write")))
    assert exchange(signed_in, app_client_id, both["code"], verifier).json()["scope"] == "cinema"


@pytest.mark.django_db
def test_consent_offers_only_the_modes_asked_for_and_grants_no_more(signed_in, app_client_id):
    _verifier, challenge = pkce()
    page = signed_in.get("/oauth/authorize/", authorize_params(app_client_id, challenge, scope="cinema:read"))
    assert [scope for scope, _label in page.context["groups"][0][2]] == ["cinema:read"]
    widened = consent(signed_in, app_client_id, challenge, groups=("cinema:write",), scope="cinema:read")
    assert redirect_query(widened)["error"] == "invalid_scope"
    unknown = consent(signed_in, app_client_id, challenge, groups=("cinema:admin",), scope="cinema")
    assert redirect_query(unknown)["error"] == "invalid_scope"
    assert not live_tokens().exists()


@pytest.mark.django_db
def test_the_connections_page_shows_what_each_client_holds(signed_in, app_client_id):
    verifier, challenge = pkce()
    query = redirect_query(consent(signed_in, app_client_id, challenge, groups=("cinema:read",)))
    assert exchange(signed_in, app_client_id, query["code"], verifier).status_code == 200
    page = signed_in.get("/oauth/connections/")
    ((_client, held),) = page.context["connections"]
    assert held == ["映画館：作品、上映スケジュール、座席、予約（読み取りのみ）"]
    assert "読み取りのみ" in page.content.decode()


def test_the_protected_resource_metadata_lists_every_scope(client):
    scopes = client.get("/.well-known/oauth-protected-resource/mcp").json()["scopes_supported"]
    assert scopes[:3] == ["cinema", "cinema:read", "cinema:write"] and "reminders:write" in scopes
    assert len(scopes) == 15
