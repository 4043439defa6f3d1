"""MCP Apps (docs/mcp-apps.md): the views and what the server does for them, through the official Python client in
process (each call its own server where it matters, as behind a load balancer) and the HTTP app on 2026-07-28.

Graceful: a client without the extension gets what it got before, byte for byte; the extension is advertised where
a view is served; the views are resources scoped like every other. Safe: the views' sources use no HTML sinks and
no other origin. The message card: nothing is sent without the person's Send, once, by the key it was shown to.
The browser side (the real AppBridge host driving these views) is appshost's."""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from django.conf import settings
from django.utils import timezone
from mcp import Client
from mcp.client.extension import advertise
from mcp.shared.exceptions import MCPError

from cinema.tests.conftest import make_movie, make_schedule, make_theater
from mcpsite.mcp import dispatch, requeststate, resources, ui
from mcpsite.mcp.interaction import Interaction
from mcpsite.mcp.server import build_server
from mcpsite.mcp.ui import CARD_META
from mcpsite.models import ToolCall
from merchant.catalog import seed_products
from reminders import selectors as reminders_selectors
from reminders.models import Contact, Message

from .concurrency import needs_concurrent_writers, run_together
from .modern import envelope, exchange
from .test_serving import running_site

pytestmark = pytest.mark.django_db(transaction=True)

APPS = [advertise(ui.EXTENSION_ID, {"mimeTypes": [ui.APP_MIME_TYPE]})]
VIEWS = {
    "ui://cinema/seat-picker": "cinema",
    "ui://merchant/cart-review": "merchant",
    "ui://reminders/message-card": "reminders",
}
HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">'
REPO = Path(__file__).resolve().parents[2]


def run(fn, *, api_key=None, groups=None, apps=True, mode="2026-07-28", **options: Any):
    """`await fn(client)` with a fresh server and client (declaring MCP Apps unless `apps=False`)."""

    async def connected():
        server = build_server(lambda _ctx: (dispatch.call_context(transport="test", api_key=api_key), groups))
        extensions = APPS if apps else None
        async with Client(server, mode=mode, cache=None, extensions=extensions, **options) as client:  # type: ignore[arg-type]
            return await fn(client)

    return anyio.run(connected)


def dumped(result: Any) -> str:
    return json.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True), ensure_ascii=False)


@pytest.fixture
def show(db):
    """A show tomorrow of a film with a hostile title, in a theater with an aisle (no seat in column 3)."""
    theater = make_theater(name=f"Theater {HOSTILE}", rows=3, columns=5)
    theater.seats.filter(column=3).delete()
    movie = make_movie(title=f"Film {HOSTILE}")
    day = timezone.localdate() + datetime.timedelta(days=1)
    return make_schedule(movie, theater, day, start="18:00")


@pytest.fixture
def products(db):
    saved = []
    for product in list(seed_products())[:2]:
        product.save()
        saved.append(product)
    saved[0].name = f"Product {HOSTILE}"
    saved[0].save()
    return saved


@pytest.fixture
def hanako(user):
    return Contact.objects.create(owner=user, name=f"花子 {HOSTILE}", email="hanako@example.com")


# --- graceful: without the extension, today's answers -------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_without_the_extension_tools_list_and_calls_are_unchanged(mode, show, settings):
    """The same answers, byte for byte, as with MCP Apps switched off; with the extension only `_meta` differs."""
    seats = {"schedule_id": show.public_id}

    async def session(client):
        tools = await client.list_tools()
        call = await client.call_tool("get_seat_availability", seats)
        return dumped(tools), dumped(call)

    without = run(session, apps=False, mode=mode)
    settings.MCP_APPS = False
    switched_off = run(session, apps=True, mode=mode)
    settings.MCP_APPS = True
    with_apps = run(session, apps=True, mode=mode)
    assert without == switched_off
    assert "ui://" not in without[0] + without[1] and "message.confirm_send" not in without[0]
    assert with_apps != without
    plain_tools = json.loads(with_apps[0])["tools"]
    for tool in plain_tools:
        tool.pop("_meta", None)
    assert [t for t in plain_tools if t["name"] != "message.confirm_send"] == json.loads(without[0])["tools"]
    call = json.loads(with_apps[1])
    assert call["_meta"].pop("mcpsite/show")["schedule_id"] == show.public_id
    if not call["_meta"]:  # 2025-11-25 results carry no serverInfo stamp
        del call["_meta"]
    assert call == json.loads(without[1])


def test_without_the_extension_on_the_2026_wire_the_bytes_are_unchanged(api_key, show, settings):
    """The HTTP app's own 2026-07-28 answers (the direct tools/call path included), compared as bytes."""
    _key, raw = api_key
    capabilities = {"extensions": {ui.EXTENSION_ID: {"mimeTypes": [ui.APP_MIME_TYPE]}}}
    messages = [
        envelope(1, "tools/list"),
        envelope(2, "tools/call", {"name": "get_seat_availability", "arguments": {"schedule_id": show.public_id}}),
    ]

    async def answers(declared):
        async with running_site() as app:
            return [
                json.dumps((await exchange(app, raw, {**m, "params": with_capabilities(m, declared)}))[2])
                for m in messages
            ]

    def with_capabilities(message, declared):
        params = dict(message["params"])
        params["_meta"] = {**params["_meta"], "io.modelcontextprotocol/clientCapabilities": declared}
        return params

    without = anyio.run(answers, {})
    with_apps = anyio.run(answers, capabilities)
    settings.MCP_APPS = False
    switched_off = anyio.run(answers, capabilities)
    assert without == switched_off
    assert '"ui://cinema/seat-picker"' in with_apps[0] and "mcpsite/show" in with_apps[1]
    assert "ui://" not in "".join(without) and "mcpsite/show" not in without[1]


def refusal(call):
    """`await call`'s MCPError (None when it succeeded)."""

    async def attempt():
        try:
            await call
        except MCPError as exc:
            return exc.error
        return None

    return attempt()


def test_app_only_tools_do_not_exist_without_the_extension(user):
    def confirm_send(client):
        return refusal(client.call_tool("message.confirm_send", {"confirmation": "v1.x"}))

    refused = run(confirm_send, apps=False)
    assert refused.code == -32602 and refused.message == "Unknown tool: message.confirm_send"


def test_the_seed_transports_never_list_app_only_tools(rpc):
    names = [t["name"] for t in rpc("tools/list")["result"]["tools"]]
    assert "message.send" in names and "message.confirm_send" not in names


# --- advertised where served --------------------------------------------------------------------------------------


def _advertised(client) -> bool:
    capabilities = client.session.server_capabilities
    return bool(capabilities and capabilities.extensions and ui.EXTENSION_ID in capabilities.extensions)


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # auto: server/discover, then 2026-07-28
def test_the_extension_is_advertised_only_where_a_view_is_served(mode, make_api_key, settings):
    async def advertised(client):
        return _advertised(client)

    cinema_key, _raw = make_api_key(scopes=["cinema"])
    ledger_key, _raw = make_api_key(scopes=["ledger", "geo"])
    assert run(advertised, mode=mode) is True
    assert run(advertised, mode=mode, api_key=cinema_key) is True
    assert run(advertised, mode=mode, api_key=ledger_key) is False  # its scopes reach no view
    assert run(advertised, mode=mode, groups=["geo"]) is False  # the /mcp/geo endpoint serves none
    settings.MCP_APPS = False
    assert run(advertised, mode=mode) is False


def test_server_discover_advertises_the_extension(api_key):
    _key, raw = api_key

    async def discover():
        async with running_site() as app:
            return (await exchange(app, raw, envelope(1, "server/discover")))[2]

    assert anyio.run(discover)["result"]["capabilities"]["extensions"] == {ui.EXTENSION_ID: {}}


# --- the views as resources ---------------------------------------------------------------------------------------


def test_views_are_listed_to_apps_clients_with_their_csp(user):
    async def listed(client):
        return {r.uri: r for r in (await client.list_resources()).resources}

    with_apps = run(listed)
    without = run(listed, apps=False)
    for uri in VIEWS:
        assert with_apps[uri].mime_type == ui.APP_MIME_TYPE
        assert with_apps[uri].meta == {"ui": {"csp": ui.CSP, "prefersBorder": True}}
        assert uri not in without
    assert all(not csp for csp in ui.CSP.values())  # no other origin for anything


def test_a_view_is_read_with_its_csp_and_a_cache_hint(user):
    async def read(client):
        return await client.read_resource("ui://cinema/seat-picker")

    result = run(read)
    (contents,) = result.contents
    assert contents.mime_type == ui.APP_MIME_TYPE and contents.text.startswith("<!doctype html>")
    assert contents.meta == {"ui": {"csp": ui.CSP, "prefersBorder": True}}
    assert (result.ttl_ms, result.cache_scope) == (ui.VIEW_TTL_MS, "private")


@pytest.mark.parametrize("uri,group", VIEWS.items())
def test_a_key_without_the_group_can_neither_list_nor_read_its_view(uri, group, make_api_key):
    others = [g for g in ("cinema", "merchant", "reminders", "ledger", "geo") if g != group]
    key, _raw = make_api_key(scopes=others)

    async def attempt(client):
        listed = [r.uri for r in (await client.list_resources()).resources]
        try:
            await client.read_resource(uri)
        except MCPError as exc:
            return listed, exc.error.code
        return listed, None

    listed, code = run(attempt, api_key=key)
    assert uri not in listed and code == 403  # ScopeDenied, as for its tools
    assert ToolCall.objects.filter(tool=f"resources/read {uri.rsplit('/', 1)[1]}", outcome="denied").exists()


def test_the_seat_map_template_names_its_view_for_apps_clients(show):
    async def listed(client):
        templates = (await client.list_resource_templates()).resource_templates
        maps = [r for r in (await client.list_resources()).resources if r.uri.endswith("/seats")]
        return [t.meta for t in templates if t.name == "seat-map"], [r.meta for r in maps]

    assert run(listed) == (
        [{"ui": {"resourceUri": "ui://cinema/seat-picker"}}],
        [{"ui": {"resourceUri": "ui://cinema/seat-picker"}}],
    )
    assert run(listed, apps=False) == ([None], [None])


def test_the_tools_name_their_views_and_the_companion_is_app_only(user):
    async def listed(client):
        return {t.name: t.meta for t in (await client.list_tools()).tools if t.meta}

    assert run(listed) == {
        "get_seat_availability": {"ui": {"resourceUri": "ui://cinema/seat-picker"}},
        "build_cart_mandates": {"ui": {"resourceUri": "ui://merchant/cart-review"}},
        "message.send": {"ui": {"resourceUri": "ui://reminders/message-card"}},
        "message.confirm_send": {"ui": {"resourceUri": "ui://reminders/message-card", "visibility": ["app"]}},
    }


# --- safe by construction ------------------------------------------------------------------------------------------

SINKS = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*['\"]on"
    r"|\.src\s*=|\.href\s*=|srcdoc|<link|@import|@font-face|url\(|https?://|<img|<iframe|<object|<embed"
)


def _sources() -> list[Path]:
    shared = [ui.SHARED / "bridge.js", ui.SHARED / "base.css"]
    return shared + [REPO / p for p in ("cinema/ui/seat_picker.html", "merchant/ui/cart_review.html",
                                        "reminders/ui/message_card.html")]  # fmt: skip


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.name)
def test_view_sources_use_no_html_sink_and_no_other_origin(path):
    """Data reaches the page as text only (textContent, text nodes, attributes through setAttribute), and nothing
    is fetched from anywhere: no URL at all in the sources."""
    text = path.read_text(encoding="utf-8")
    assert SINKS.findall(text) == []


@pytest.mark.parametrize("uri", VIEWS)
def test_each_view_is_one_document_whose_csp_admits_only_its_own_scripts(uri):
    spec, _variables = resources.find(uri)
    html = spec.read(None)
    assert "mcpsite:" not in html  # every marker filled
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 1 and "const McpView" in scripts[0]
    (policy,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    import base64
    import hashlib

    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}';" in policy and "default-src 'none'" in policy
    assert "unsafe-eval" not in policy and "connect-src 'none'" in policy
    assert "<script src" not in html and settings.SECRET_KEY not in html


@pytest.mark.parametrize("uri", VIEWS)
def test_each_views_script_is_valid_javascript(uri, tmp_path):
    """The assembled script parses (Node 22's `--check`, from scripts/node-tools): a syntax error would leave the
    view blank in every host, and no Python test would see it."""
    from .tsclient import node_bin

    spec, _variables = resources.find(uri)
    (script,) = re.findall(r"<script>(.*?)</script>", spec.read(None), re.S)
    source = tmp_path / "view.js"
    source.write_text(script, encoding="utf-8")
    checked = subprocess.run([str(node_bin() / "node"), "--check", str(source)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_the_documented_hooks_are_in_the_views():
    """docs/mcp-apps.md lists the DOM hooks the browser tests drive: each exists in its view."""
    docs = (REPO / "docs" / "mcp-apps.md").read_text(encoding="utf-8")
    section = docs.split("## Driving the views in tests", 1)[1].split("\n## ", 1)[0]
    sources = "".join(p.read_text(encoding="utf-8") for p in _sources())
    hooks = {h for h in re.findall(r"^\| `([a-z-]+)`", section, re.M)}
    assert len(hooks) > 15
    missing = [h for h in hooks if f'"{h}"' not in sources and f"`{h}" not in sources and f'"{h}-' not in sources]
    assert missing == []


# --- the seat picker and the cart review get the database's data ----------------------------------------------------


def test_the_seat_picker_result_names_the_show_and_booking_works_through_the_same_client(show):
    async def pick(client):
        seats = await client.call_tool("get_seat_availability", {"schedule_id": show.public_id})
        booked = await client.call_tool(
            "reserve_seats", {"schedule_id": show.public_id, "seats": ["A1", "A2"], "reservation_password": "secret1"}
        )
        taken = await client.call_tool(
            "reserve_seats", {"schedule_id": show.public_id, "seats": ["A2", "B1"], "reservation_password": "secret1"}
        )
        return seats, booked, taken

    seats, booked, taken = run(pick)
    assert seats.meta["mcpsite/show"] == {
        "schedule_id": show.public_id,
        "title": f"Film {HOSTILE}",
        "theater": f"Theater {HOSTILE}",
        "date": show.date.isoformat(),
        "start_time": "18:00",
    }
    assert {s["column"] for s in seats.structured_content["seats"]} == {1, 2, 4, 5}  # the aisle is column 3
    assert booked.structured_content["reserved_seats"] == ["A1", "A2"] and "mcpsite/show" not in (booked.meta or {})
    assert taken.is_error and taken.structured_content == {
        "code": 409,
        "message": "Seat conflict",
        "data": {"conflicted_seats": ["A2"], "message": "Seat A2 is already reserved"},
    }


def test_the_cart_review_shows_the_database_price_whatever_the_agent_sent(products):
    first, second = products
    plan = {"items": [{"product_id": first.pk, "quantity": 2}, {"product_id": second.pk, "quantity": 1}]}
    claimed = [{"id": first.pk, "price_jpy": 1.0}]

    async def build(client):
        return await client.call_tool("build_cart_mandates", {"cart_plan": plan, "products": claimed})

    result = run(build)
    contents = result.structured_content["cart_mandate"]["contents"]
    (line, _other) = contents["metadata"]["raw_items"]
    assert line["name"] == f"Product {HOSTILE}" and line["unit_price_jpy"] == first.price_cents / 100
    assert result.structured_content["warnings"][0].startswith(f"Product {first.pk}: price_jpy 1.0")
    assert {"merchant_name", "total", "display_items", "cart_expiry"} <= set(contents)


def test_the_cart_review_gets_each_short_line(products):
    first, _second = products
    plan = {"items": [{"product_id": first.pk, "quantity": first.inventory_count + 1}]}

    async def build(client):
        return await client.call_tool("build_cart_mandates", {"cart_plan": plan, "products": []})

    result = run(build)
    assert result.is_error and result.structured_content["code"] == 409
    (short,) = result.structured_content["data"]["insufficient_stock"]
    assert (short["product_id"], short["requested"], short["available"]) == (
        first.pk,
        first.inventory_count + 1,
        first.inventory_count,
    )


# --- the message card: nothing sent without the person's Send, once, by the key it was shown to --------------------

TEXT = f"今から向かいます {HOSTILE}"


def _send(api_key, to=f"花子 {HOSTILE}", **options):
    async def call(client):
        return await client.session.call_tool("message.send", {"to": to, "text": TEXT}, allow_input_required=True)

    return run(call, api_key=api_key, **options)


def _confirm(api_key, token, **options):
    async def call(client):
        return await client.call_tool("message.confirm_send", {"confirmation": token})

    return run(call, api_key=api_key, **options)


def _card(result) -> dict:
    assert isinstance(result, types.CallToolResult) and not result.is_error, result
    return result.meta[CARD_META]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_send_shows_a_card_and_sends_nothing_until_the_person_presses_send(mode, api_key, hanako):
    key, _raw = api_key
    first = _send(key, mode=mode)
    card = _card(first)
    assert card["details"] == {
        "recipient": hanako.name,
        "contact_id": hanako.public_id,
        "platform": "email",
        "address": "hanako@example.com",
        "text": TEXT,
    }
    # The model is told nothing was done; the token is only in `_meta`, which hosts keep from the model.
    assert first.structured_content == {
        "status": "error",
        "error": "Not done yet: the person confirms or cancels on the card shown with this result",
    }
    assert card["token"] not in first.content[0].text
    assert Message.objects.count() == 0
    sent = _confirm(key, card["token"], mode=mode)
    assert sent.structured_content["status"] == "ok"
    message = Message.objects.get()
    assert (message.public_id, message.text, message.confirmation_key) == (
        sent.structured_content["id"],
        TEXT,
        message.confirmation_key,
    )
    again = _confirm(key, card["token"], mode=mode)  # a second press, or a retry after a lost reply
    assert again.structured_content == sent.structured_content and Message.objects.count() == 1


def test_an_apps_client_that_also_answers_forms_still_gets_the_card(api_key, hanako):
    async def accept(context, params):
        return types.ElicitResult(action="accept", content={"confirm": True})

    key, _raw = api_key
    _card(_send(key, elicitation_callback=accept))
    _card(_send(key, mode="legacy", elicitation_callback=accept))
    assert Message.objects.count() == 0


def test_without_apps_the_confirmation_is_the_form_as_before(api_key, hanako):
    key, _raw = api_key
    first = _send(key, apps=False, elicitation_callback=lambda *a: None)
    assert isinstance(first, types.InputRequiredResult) and "confirm" in first.input_requests


def test_a_card_is_the_key_it_was_shown_to(make_api_key, user, hanako):
    key, _raw = make_api_key()
    other, _raw = make_api_key(name="another key of the same user")
    token = _card(_send(key))["token"]
    refused = _confirm(other, token)
    assert refused.is_error and refused.structured_content == {
        "status": "error",
        "error": "Invalid or expired confirmation; ask again for a new card",
    }
    assert Message.objects.count() == 0


def test_a_forged_altered_or_expired_card_sends_nothing(api_key, hanako, settings, monkeypatch):
    key, _raw = api_key
    token = _card(_send(key))["token"]
    altered = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    for bad in (altered, "v1.forged", ""):
        assert _confirm(key, bad).is_error
    import time as time_module

    later = time_module.time() + settings.MCP_REQUEST_STATE_TTL + 1
    monkeypatch.setattr("mcpsite.mcp.ui.time.time", lambda: later)
    assert _confirm(key, token).is_error
    assert Message.objects.count() == 0


def test_a_card_token_is_no_request_state_and_the_other_way_round(api_key, hanako):
    key, _raw = api_key
    token = _card(_send(key))["token"]

    def as_state(client):
        answer = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}
        arguments = {"to": f"花子 {HOSTILE}", "text": TEXT}
        return refusal(client.session.call_tool("message.send", arguments, input_responses=answer, request_state=token))

    refused = run(as_state, api_key=key, apps=False, elicitation_callback=lambda *a: None)
    assert refused.message == "Invalid or expired requestState"
    state = _send(key, apps=False, elicitation_callback=lambda *a: None).request_state
    assert _confirm(key, state).is_error
    assert Message.objects.count() == 0


def test_a_card_whose_message_changed_since_asks_again(api_key, hanako):
    key, _raw = api_key
    token = _card(_send(key))["token"]
    hanako.email = "new-hanako@example.com"
    hanako.save()
    refused = _confirm(key, token)
    assert refused.is_error and "changed since the card was shown" in refused.structured_content["error"]
    assert Message.objects.count() == 0


def test_card_calls_are_audited(api_key, hanako):
    key, _raw = api_key
    _confirm(key, _card(_send(key))["token"])
    outcomes = list(ToolCall.objects.order_by("pk").values_list("tool", "outcome"))
    assert outcomes == [("message.send", "input_required"), ("message.confirm_send", "ok")]


def test_two_sends_of_one_card_at_once_store_one_message(api_key, hanako, monkeypatch):
    """Two presses of Send arriving together (two processes): both pass the look for an earlier message before
    either writes (a barrier makes it certain); the nonce, unique on the message, keeps it to one."""
    needs_concurrent_writers()
    key, _raw = api_key
    token = _card(_send(key))["token"]
    barrier = threading.Barrier(2)
    looked = threading.local()
    real = reminders_selectors.message_confirmed

    def look(*, owner, key):
        found = real(owner=owner, key=key)
        if not getattr(looked, "once", False):  # each thread's first look only (the loser looks again)
            looked.once = True
            barrier.wait(timeout=30)
        return found

    monkeypatch.setattr(reminders_selectors, "message_confirmed", look)

    def press(_i):
        base = dispatch.call_context(transport="test", api_key=key)
        card = ui.CardInteraction(Interaction(), "message.confirm_send", {}, requeststate.principal_of(base))  # type: ignore[arg-type]
        ctx = dataclasses.replace(base, apps=True, interaction=card)
        return dispatch.call_tool(ctx, "message.confirm_send", {"confirmation": token}).data

    sent, errors = run_together(press, 2)
    assert errors == [] and sent[0] == sent[1] and sent[0]["status"] == "ok"
    assert Message.objects.count() == 1
