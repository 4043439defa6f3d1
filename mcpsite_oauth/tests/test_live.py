"""Remote sign-in end to end: the official MCP Python client's OAuth provider against a live uvicorn, with the
browser step (sign in, consent) done by Playwright on Debian Chromium; then the resource server's refusals
(RFC 6750 / RFC 9728 challenges) for tokens that must not work."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from mcpsite.tests.live import free_port, live_site

from .live_setup import PASSWORD

pytestmark = pytest.mark.slow

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync"]


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    with live_site(live_template, tmp_path_factory.mktemp("oauth-live")) as live:
        url = live.start_server()
        script = f"from mcpsite_oauth.tests.live_setup import main; main({url!r})"
        live.info = json.loads(live.shell(script))
        yield live


class MemoryStorage:
    def __init__(self):
        self.tokens = self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


def chromium_path() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        pytest.fail("Debian chromium is not installed (make test installs it: apt-get install chromium)")
    return path


async def catch_callback(page, callback: str, seen: dict) -> None:
    """The client's loopback callback, answered in the browser; its URL goes to seen["callback"]."""

    async def on_callback(route):
        seen["callback"] = route.request.url
        await route.fulfill(status=200, content_type="text/plain", body="ok")

    await page.route(f"{callback}?*", on_callback)


async def use_tools(session, seen: dict) -> None:
    """What the first test's client does once signed in."""
    seen["tools"] = [tool.name for tool in (await session.list_tools()).tools]
    seen["echo"] = await session.call_tool("test_echo", {"text": "映画"})
    seen["event"] = await session.call_tool(
        "calendar.create", {"title": "歯医者", "start": "2030-01-10T10:00:00+09:00", "duration_min": 30}
    )
    seen["ledger"] = await session.call_tool("list_accounts", {})


async def sign_in_and_use_tools(base: str, *, allow: bool = True, read_only_first: bool = False, use=use_tools):
    """The whole flow as a remote client does it, from the URL alone. Returns what the test checks.
    `read_only_first`: at the first consent the person unticks every Write box (a later one allows all)."""
    from playwright.async_api import async_playwright

    callback = f"http://127.0.0.1:{free_port()}/callback"
    seen: dict = {"authorization_urls": []}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        page = await browser.new_page(locale="ja-JP")

        await catch_callback(page, callback, seen)

        async def redirect_handler(authorization_url: str) -> None:
            first = not seen["authorization_urls"]
            seen["authorization_urls"].append(authorization_url)
            seen["authorization_url"] = authorization_url
            await page.goto(authorization_url)
            if first:  # later rounds find the person signed in
                seen["login_title"] = await page.title()
                seen["login_text"] = await page.inner_text("#content")
                await page.fill("#id_username", "hanako")
                await page.fill("#id_password", PASSWORD)
                await page.click("input[type=submit]")
            await page.wait_for_selector("#consent-form")
            seen["consent_text"] = await page.inner_text("#content-main")
            seen["consent_groups"] = await page.eval_on_selector_all(
                "input[name=groups]", "els => els.map(e => e.value)"
            )
            if first and read_only_first:
                for box in await page.query_selector_all("input[name=groups][value$=':write']"):
                    await box.uncheck()
            await page.click("input[name=allow]" if allow else "input[name=deny]")
            await page.wait_for_url(f"{callback}?*")

        async def callback_handler() -> AuthorizationCodeResult:
            query = parse_qs(urlsplit(seen["callback"]).query)
            if "error" in query:
                raise RuntimeError(query["error"][0])
            return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query["iss"][0])

        storage = MemoryStorage()
        provider = OAuthClientProvider(
            server_url=f"{base}/mcp",
            client_metadata=OAuthClientMetadata(
                client_name="テスト エージェント",
                redirect_uris=[callback],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method="none",
            ),
            storage=storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
            async with streamable_http_client(f"{base}/mcp", http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await use(session, seen)
        await browser.close()
    seen["storage"] = storage
    return seen


def test_official_client_signs_in_through_the_browser_and_calls_tools(site):
    base = site.urls[0]
    seen = anyio.run(sign_in_and_use_tools, base)

    # The pages: Japanese, the admin's look, the client, its redirect host and the groups.
    assert "MCP クライアント" in seen["login_title"] and "Django" not in seen["login_title"]
    assert "ユーザー名" in seen["login_text"]
    assert "テスト エージェント" in seen["consent_text"] and "127.0.0.1" in seen["consent_text"]
    assert "許可" in seen["consent_text"] or seen["consent_groups"]
    # Everything was requested; hanako may use cinema and reminders only (a box for each mode), the rest is shown as
    # left out.
    assert seen["consent_groups"] == ["cinema:read", "cinema:write", "reminders:read", "reminders:write"]
    assert "利用できない" in seen["consent_text"]
    authorization = parse_qs(urlsplit(seen["authorization_url"]).query)
    assert authorization["code_challenge_method"] == ["S256"]
    assert authorization["resource"] == [f"{base}/mcp"]

    # The tools of the granted groups, called as hanako.
    assert "test_echo" in seen["tools"] and "calendar.create" in seen["tools"]
    assert "list_accounts" not in seen["tools"]
    assert seen["echo"].structured_content == {"echo": "映画", "transport": "http"}
    assert seen["event"].structured_content["status"] == "ok"
    assert seen["ledger"].is_error and seen["ledger"].structured_content["code"] == 403
    event_id = seen["event"].structured_content["id"]
    owner = site.shell(f"from reminders.models import Event; print(Event.objects.get(public_id={event_id!r}).owner)")
    assert owner == "hanako"
    tokens = seen["storage"].tokens
    assert sorted(tokens.scope.split()) == ["cinema", "reminders"]

    # The audit names the user and the client, as it names a key.
    audit = site.shell(
        "from mcpsite.models import ToolCall; "
        "print(sorted({(c.tool, c.user.username, c.oauth_client.name, c.api_key_id) "
        "for c in ToolCall.objects.filter(oauth_client__isnull=False)}))",
    )
    assert "('test_echo', 'hanako', 'テスト エージェント', None)" in audit
    assert "('calendar.create', 'hanako', 'テスト エージェント', None)" in audit

    # Refresh-token rotation: a new pair; the old refresh token is spent, and reusing it is refused.
    client = seen["storage"].client_info
    token_url = f"{base}/oauth/token/"
    refresh = {
        "grant_type": "refresh_token",
        "refresh_token": tokens.refresh_token,
        "client_id": client.client_id,
        "resource": f"{base}/mcp",
    }
    rotated = httpx2.post(token_url, data=refresh)
    assert rotated.status_code == 200, rotated.text
    assert rotated.json()["refresh_token"] != tokens.refresh_token
    reused = httpx2.post(token_url, data=refresh)
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    fresh = rotated.json()["access_token"]
    # Reuse of a spent refresh token revokes its whole family, the rotated token included.
    assert _post(base, "/mcp", fresh).status_code == 401


def _post(base, path, token=None, **headers):
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx2.post(f"{base}{path}", json=PING, headers={"Accept": "application/json, text/event-stream", **headers})


def test_metadata_documents_lead_a_client_from_the_url_alone(site):
    base = site.urls[0]
    challenge = _post(base, "/mcp")
    assert challenge.status_code == 401
    assert challenge.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
    )
    group = _post(base, "/mcp/cinema").headers["www-authenticate"]
    assert 'scope="cinema"' in group and "resource_metadata=" in group

    resource = httpx2.get(f"{base}/.well-known/oauth-protected-resource/mcp").json()
    assert resource["resource"] == f"{base}/mcp"
    assert resource["authorization_servers"] == [base]
    groups = ["cinema", "ledger", "geo", "merchant", "reminders"]
    assert resource["scopes_supported"] == [scope for g in groups for scope in (g, f"{g}:read", f"{g}:write")]
    assert httpx2.get(f"{base}/.well-known/oauth-protected-resource").json()["resource"] == base

    server = httpx2.get(f"{base}/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == base
    assert server["authorization_endpoint"] == f"{base}/oauth/authorize/"
    assert server["token_endpoint"] == f"{base}/oauth/token/"
    assert server["registration_endpoint"] == f"{base}/oauth/register/"
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["response_types_supported"] == ["code"]
    assert server["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert server["client_id_metadata_document_supported"] is False  # off: docs/oauth.md


@pytest.mark.parametrize("kind", ["other_audience", "unbound", "expired"])
def test_tokens_for_another_audience_unbound_or_expired_are_invalid_token(site, kind):
    response = _post(site.urls[0], "/mcp", site.info["tokens"][kind])
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token", resource_metadata=')


def test_a_token_for_one_group_is_insufficient_scope_on_another(site):
    base, token = site.urls[0], site.info["tokens"]["cinema"]
    assert _post(base, "/mcp/cinema", token).status_code == 200
    refused = _post(base, "/mcp/reminders", token)
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope", scope="reminders", resource_metadata=')


def test_a_scope_the_user_lost_or_never_had_gives_nothing(site):
    """A token naming ledger for a user without the ledger permissions: ledger is refused like any other group."""
    refused = _post(site.urls[0], "/mcp/ledger", site.info["tokens"]["ledger_not_allowed"])
    assert refused.status_code == 403 and 'error="insufficient_scope"' in refused.headers["www-authenticate"]


def test_a_revoked_token_stops_at_the_next_request(site):
    base, token = site.urls[0], site.info["tokens"]["to_revoke"]
    assert _post(base, "/mcp", token).status_code == 200
    site.shell(
        "from oauth2_provider.models import AccessToken; from mcpsite_oauth.services import access_tokens_revoke; "
        "import hashlib; t = AccessToken.objects.get(token_checksum=hashlib.sha256(b'tok-revoke').hexdigest()); "
        "access_tokens_revoke(token_ids=[t.pk])",
    )
    assert _post(base, "/mcp", token).status_code == 401


def test_api_keys_keep_working_beside_tokens(site):
    assert _post(site.urls[0], "/mcp", site.key).status_code == 200


def test_concurrent_refreshes_of_one_token_on_a_live_site(site):
    """Eight processes' worth of requests with one refresh token, released together against uvicorn with four
    workers (the database is the site's own: a SQLite file, or PostgreSQL in the PG pass): one gets tokens, the
    others a clean invalid_grant; nothing answers 500 or logs a traceback."""
    base = site.start_server(workers=4)
    pair = json.loads(site.shell(f"from mcpsite_oauth.tests.live_setup import refresh_pair; refresh_pair({base!r})"))
    data = {"grant_type": "refresh_token", "client_id": pair["client_id"], "refresh_token": pair["refresh_token"]}
    barrier = threading.Barrier(8)

    def one(_i):
        barrier.wait(timeout=60)
        response = httpx2.post(f"{base}/oauth/token/", data=data, timeout=60)
        return response.status_code, json.loads(response.content).get("error")

    with ThreadPoolExecutor(8) as pool:
        outcomes = sorted(pool.map(one, range(8)))
    assert outcomes == [(200, None)] + [(400, "invalid_grant")] * 7
    log = (Path(site.env["MCPSITE_VAR_DIR"]) / f"uvicorn-{urlsplit(base).port}.log").read_text()
    assert "Traceback" not in log and "ERROR" not in log


async def sign_in_without_usable_groups(base: str, client_id: str, callback: str, locale: str) -> dict:
    """A non-staff user with no tool group signs in through the browser: what they see, and what reaches the
    client's callback when they follow the page's link."""
    from playwright.async_api import async_playwright

    verifier = "v" * 64
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": callback,
            "scope": "ledger",
            "state": "st-1",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": f"{base}/mcp",
        }
    )
    seen: dict = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        page = await browser.new_page(locale=locale)

        await catch_callback(page, callback, seen)
        await page.goto(f"{base}/oauth/authorize/?{query}")
        seen["login_header"] = await page.inner_text("#site-name")
        await page.fill("#id_username", "jiro")
        await page.fill("#id_password", PASSWORD)
        await page.click("input[type=submit]")
        await page.wait_for_selector("#no-groups")
        seen["page_text"] = await page.inner_text("#content-main")
        await page.click("#return-to-client")
        await page.wait_for_url(f"{callback}?*")
        await browser.close()
    return seen


@pytest.mark.parametrize(
    ("locale", "says"), [("ja-JP", "利用できるツールグループがない"), ("en-US", "may not use any")]
)
def test_a_user_with_no_usable_group_is_told_why_and_the_client_gets_invalid_scope(site, locale, says):
    base = site.urls[0]
    site.shell(
        "from django.contrib.auth import get_user_model; U = get_user_model(); "
        f"U.objects.filter(username='jiro').exists() or U.objects.create_user('jiro', password={PASSWORD!r})",
    )
    callback = f"http://127.0.0.1:{free_port()}/callback"
    registered = httpx2.post(
        f"{base}/oauth/register/",
        json={"client_name": "Agent", "redirect_uris": [callback], "token_endpoint_auth_method": "none"},
    )
    assert registered.status_code == 201, registered.text
    seen = anyio.run(sign_in_without_usable_groups, base, registered.json()["client_id"], callback, locale)
    assert "Django" not in seen["login_header"] and "mcpsite" in seen["login_header"]
    assert says in seen["page_text"]
    query = parse_qs(urlsplit(seen["callback"]).query)
    assert query["error"] == ["invalid_scope"] and query["state"] == ["st-1"]


async def read_then_write(session, seen: dict) -> None:
    """A client granted read only: it lists and reads, then calls a writing tool, which needs the step-up."""
    seen["tools"] = [tool.name for tool in (await session.list_tools()).tools]
    seen["movies"] = await session.call_tool("get_movie_list", {})
    seen["echo"] = await session.call_tool("test_echo", {"text": "書き込み"})
    seen["tools_after"] = [tool.name for tool in (await session.list_tools()).tools]


def test_official_client_steps_up_from_read_to_write(site):
    """The person grants read only; the client's writing call is refused with insufficient_scope naming
    cinema:write, so the official client asks again (keeping what it holds), the person allows writing, and the
    call goes through: least privilege first, more only when asked for, with the person's consent."""
    base = site.urls[0]
    seen = anyio.run(lambda: sign_in_and_use_tools(base, read_only_first=True, use=read_then_write))
    assert "get_movie_list" in seen["tools"] and "test_echo" not in seen["tools"]
    assert not seen["movies"].is_error
    first, second = seen["authorization_urls"]
    assert "cinema:write" in parse_qs(urlsplit(second).query)["scope"][0].split()
    assert seen["echo"].structured_content == {"echo": "書き込み", "transport": "http"}
    assert "test_echo" in seen["tools_after"]
    assert sorted(seen["storage"].tokens.scope.split()) == ["cinema", "reminders"]
    audit = site.shell(
        "from mcpsite.models import ToolCall; "
        "print(sorted({(c.tool, c.outcome, c.scope) for c in ToolCall.objects.filter(tool='test_echo', "
        "oauth_client__name='テスト エージェント')}))",
    )
    assert "('test_echo', 'denied', 'cinema:write')" in audit and "('test_echo', 'ok', 'cinema')" in audit
