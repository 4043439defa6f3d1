"""An OAuth token's call outside its scopes is refused at the MCP door with 403 insufficient_scope naming the scope
the call needs (RFC 6750 §3.1), so its client can ask the person for it (MCP step-up); audited as denied."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from mcpsite.models import ToolCall
from mcpsite.tests.test_serving import request, running_site

from .live_setup import grant_groups, mint

RESOURCE = "http://127.0.0.1:8000/mcp"  # what the in-process requests of test_serving reach


def _call(name: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_read_only_token_calling_a_writing_tool_is_told_the_scope_to_ask_for(django_user_model, oauth_client):
    def setup():
        user = django_user_model.objects.create_user(username="hanako", password="x" * 12)
        grant_groups(user, ["cinema"])
        mint(user, oauth_client, "tok-read", scope="cinema:read", resource=[RESOURCE])

    await sync_to_async(setup)()
    reserve = _call("reserve_seats", {"schedule_id": "s001", "seats": ["A1"], "password": "pass1234"})
    async with running_site() as app:
        status, headers, body = await request(app, "tok-read", reserve)
        read_status, _headers, read_body = await request(app, "tok-read", _call("get_movie_list", {}))
    assert status == 403 and json.loads(body)["error"]["code"] == 403
    challenge = headers[b"www-authenticate"].decode()
    assert challenge.startswith('Bearer error="insufficient_scope", scope="cinema:write", resource_metadata=')
    assert read_status == 200 and not json.loads(read_body)["result"]["isError"]
    outcomes = await sync_to_async(lambda: sorted(ToolCall.objects.values_list("tool", "outcome")))()
    assert outcomes == [("get_movie_list", "ok"), ("reserve_seats", "denied")]


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_scope_the_user_could_not_grant_is_refused_in_band_not_challenged(django_user_model, oauth_client):
    """Asking the user again for a group they may not use would only loop: the call is refused as an API key's is."""

    def setup():
        user = django_user_model.objects.create_user(username="hanako", password="x" * 12)
        grant_groups(user, ["cinema"])
        mint(user, oauth_client, "tok-cinema", scope="cinema", resource=[RESOURCE])

    await sync_to_async(setup)()
    async with running_site() as app:
        status, headers, body = await request(app, "tok-cinema", _call("list_accounts", {}))
    result = json.loads(body)["result"]
    assert status == 200 and b"www-authenticate" not in headers
    assert result["isError"] and result["structuredContent"]["data"] == "Scope 'ledger:read' required"
