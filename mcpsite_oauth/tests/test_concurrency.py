"""One refresh token (or one code) presented by eight requests at once: exactly one answer with tokens, clean
`invalid_grant` for the others, no 500 and nothing logged as an error. Threads released together by a barrier, in
process on PostgreSQL (the test database of SQLite is in memory, where threads meet table locks, not the site's
file database); test_live.py does the same on SQLite against uvicorn. The control shows the toolkit alone fails."""

from __future__ import annotations

import json
import logging

import pytest
from django.test import Client
from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.views import TokenView as ToolkitTokenView

from mcpsite.tests.concurrency import run_together
from mcpsite_oauth.validators import McpOAuth2Validator
from mcpsite_oauth.views import TokenView

from .test_authorization import consent, exchange, hanako, pkce, redirect_query, refresh, register  # noqa: F401

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 8


def _issued(django_client, hanako):  # noqa: F811
    """A client registered, signed in as hanako, and a consented code with its verifier."""
    client_id = register(django_client).json()["client_id"]
    django_client.force_login(hanako)
    verifier, challenge = pkce()
    code = redirect_query(consent(django_client, client_id, challenge))["code"]
    return client_id, code, verifier


def _outcomes(results):
    return sorted((status, body.get("error")) for status, body in results)


def _post_together(send):
    def one(_i):
        response = send(Client())
        return response.status_code, json.loads(response.content) if response.status_code in (200, 400) else {}

    return run_together(one, THREADS)


def test_eight_refreshes_of_one_token_give_one_success(client, hanako, caplog):  # noqa: F811
    client_id, code, verifier = _issued(client, hanako)
    refresh_token = exchange(client, client_id, code, verifier).json()["refresh_token"]
    with caplog.at_level(logging.WARNING):
        results, errors = _post_together(lambda c: refresh(c, client_id, refresh_token))
    assert errors == []
    assert _outcomes(results) == [(200, None)] + [(400, "invalid_grant")] * (THREADS - 1)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_eight_exchanges_of_one_code_give_one_success(client, hanako, caplog):  # noqa: F811
    client_id, code, verifier = _issued(client, hanako)
    with caplog.at_level(logging.WARNING):
        results, errors = _post_together(lambda c: exchange(c, client_id, code, verifier))
    assert errors == []
    assert _outcomes(results) == [(200, None)] + [(400, "invalid_grant")] * (THREADS - 1)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_control_the_toolkit_alone_fails_concurrent_refreshes(client, hanako, monkeypatch):  # noqa: F811
    """Without the lock in McpOAuth2Validator.save_bearer_token the race is real: some requests answer 500 (or more
    than one gets tokens). A loaded machine may serialize one round by chance, so up to three rounds."""
    monkeypatch.setattr(McpOAuth2Validator, "save_bearer_token", OAuth2Validator.save_bearer_token)
    for _round in range(3):
        client_id, code, verifier = _issued(client, hanako)
        refresh_token = exchange(client, client_id, code, verifier).json()["refresh_token"]
        results, errors = _post_together(lambda c: refresh(c, client_id, refresh_token))
        if errors or _outcomes(results) != [(200, None)] + [(400, "invalid_grant")] * (THREADS - 1):
            return
    pytest.fail("three rounds of eight concurrent refreshes all went through cleanly without the lock")


def _revoked_as_it_answers(monkeypatch, view) -> None:
    """The interleaving the races above can meet: a concurrent reuse revokes the tokens a refresh issued between
    its commit and the view reading the new access token back."""
    issue = view.create_token_response

    def issue_then_revoked(self, request):
        answer = issue(self, request)
        get_refresh_token_model().objects.get(revoked=None).revoke()
        return answer

    monkeypatch.setattr(view, "create_token_response", issue_then_revoked)


def test_a_refresh_revoked_by_a_concurrent_reuse_still_gets_its_answer(client, hanako, monkeypatch):  # noqa: F811
    client_id, code, verifier = _issued(client, hanako)
    refresh_token = exchange(client, client_id, code, verifier).json()["refresh_token"]
    _revoked_as_it_answers(monkeypatch, TokenView)
    response = refresh(Client(), client_id, refresh_token)
    assert response.status_code == 200 and response.json()["refresh_token"] != refresh_token


def test_control_the_toolkits_token_view_fails_there(client, hanako, monkeypatch):  # noqa: F811
    """Its read-back after the answer (`objects.get`) raises when the token is gone: the 500 the view above avoids."""
    client_id, code, verifier = _issued(client, hanako)
    refresh_token = exchange(client, client_id, code, verifier).json()["refresh_token"]
    _revoked_as_it_answers(monkeypatch, ToolkitTokenView)
    monkeypatch.setattr(
        TokenView, "authorization_flow_token_response", ToolkitTokenView.authorization_flow_token_response
    )
    with pytest.raises(get_access_token_model().DoesNotExist):
        refresh(Client(raise_request_exception=True), client_id, refresh_token)
