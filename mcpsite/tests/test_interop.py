"""Streamable HTTP, stdio and WebSocket driven by clients nobody here wrote.

The official `mcp` Python client (HTTP and stdio) and the `websockets` client talk to a real uvicorn
process with the product's ASGI application (plus test-only tools).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2
import pytest
import websockets
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from mcpsite.core.errors import MissingCredentials

from .live import PYTHON, ROOT, live_site, mcp_session

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    with live_site(live_template, tmp_path_factory.mktemp("live")) as live:
        # urls[1]: the stateful SSE mode (MCP_STATELESS_HTTP=0), for the session and GET-stream tests.
        live.start_servers({}, {"MCP_STATELESS_HTTP": "0", "MCP_JSON_RESPONSE": "0"})
        yield live


def run(coro_fn):
    return anyio.run(coro_fn)


def test_official_client_lists_and_calls_tools_over_http(site):
    async def scenario(session):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        echo = await session.call_tool("test_echo", {"text": "映画", "count": 2})
        conflict = await session.call_tool("test_conflict", {})
        invalid = await session.call_tool("test_echo", {"count": "two"})
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("no_such_tool", {})
        await session.send_ping()
        return tools, echo, conflict, invalid, unknown.value

    tools, echo, conflict, invalid, unknown = run(lambda: mcp_session(f"{site.urls[0]}/mcp", site.key, scenario))
    assert tools["test_echo"].input_schema["required"] == ["text"]
    assert tools["test_echo"].input_schema["properties"]["text"]["description"] == "テキスト"
    assert echo.structured_content == {"echo": "映画映画", "transport": "http"}
    assert echo.content[0].text == '{"echo":"映画映画","transport":"http"}'  # compact, not \\u-escaped
    assert conflict.is_error and conflict.structured_content["code"] == 409
    assert conflict.structured_content["data"]["conflicted_seats"] == ["A3"]
    assert invalid.is_error and invalid.structured_content["code"] == -32602
    assert unknown.error.code == -32602


def test_group_endpoint_lists_only_that_group(site):
    async def scenario(session):
        return [t.name for t in (await session.list_tools()).tools]

    names = run(lambda: mcp_session(f"{site.urls[0]}/mcp/reminders", site.key, scenario))
    assert "test_inband" in names and "test_echo" not in names


def test_the_real_server_serves_the_admin_with_its_styles(site):
    """uvicorn + the ASGI router serve collected static files (the admin is unstyled otherwise)."""
    login = httpx2.get(f"{site.urls[0]}/admin/login/")
    css_path = next(
        part.split('"')[0] for part in login.text.split('href="')[1:] if part.split('"')[0].endswith(".css")
    )
    css = httpx2.get(f"{site.urls[0]}{css_path}")
    assert login.status_code == 200 and css.status_code == 200
    assert css.headers["content-type"].startswith("text/css") and len(css.content) > 1000


def test_http_without_key_is_401_with_www_authenticate(site):
    response = httpx2.post(f"{site.urls[0]}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"] == {"code": 401, "message": MissingCredentials.message}


def test_dns_rebinding_host_is_refused(site):
    response = httpx2.post(
        f"{site.urls[0]}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Authorization": f"Bearer {site.key}", "Host": "evil.example", "Accept": "application/json"},
    )
    assert response.status_code == 400  # the guard's Host check (mcpsite/guard.py), before the SDK's


def test_get_stream_opens_and_closes_without_hanging_the_server(site):
    url = f"{site.urls[1]}/mcp"
    headers = {"Authorization": f"Bearer {site.key}", "Accept": "application/json, text/event-stream"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    with httpx2.Client(timeout=10) as http:
        response = http.post(url, json=init, headers=headers)
        session_id = response.headers["mcp-session-id"]
        session_headers = {**headers, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session_headers)
        with http.stream("GET", url, headers={**session_headers, "Accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
        # The server still answers promptly after the stream was dropped.
        ping = http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=session_headers, timeout=5)
        assert ping.status_code == 200
        assert http.delete(url, headers=session_headers).status_code in (200, 204)


def test_session_cannot_be_used_with_another_key(site):
    other = site.manage("create_api_key", "--name", "other", "--owner", "someone", "--quiet").strip()
    url = f"{site.urls[1]}/mcp"
    accept = {"Accept": "application/json, text/event-stream"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    response = httpx2.post(url, json=init, headers={**accept, "Authorization": f"Bearer {site.key}"})
    stolen = {**accept, "Authorization": f"Bearer {other}", "mcp-session-id": response.headers["mcp-session-id"]}
    assert httpx2.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=stolen).status_code == 404


def test_official_client_over_stdio_calls_ledger_tools(site):
    site.manage("seed_ledger", "--no-sample")
    params = StdioServerParameters(
        command=PYTHON, args=["manage.py", "mcp_stdio", "--group", "ledger"], env=site.env, cwd=str(ROOT)
    )

    async def scenario():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            entry = await session.call_tool(
                "create_journal_entry",
                {"date": "2026-04-01", "description": "商品仕入", "lines": [
                    {"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 10000}]},
            )  # fmt: skip
            unbalanced = await session.call_tool(
                "create_journal_entry",
                {"date": "2026-04-01", "description": "x", "lines": [
                    {"accountCode": "500", "debitAmount": 100}, {"accountCode": "100", "creditAmount": 90}]},
            )  # fmt: skip
            balance = await session.call_tool("get_account_balance", {"accountCode": "100", "asOfDate": "2026-04-30"})
            return tools, entry, unbalanced, balance

    tools, entry, unbalanced, balance = run(scenario)
    assert tools == sorted(
        ["create_journal_entry", "get_account_balance", "list_accounts", "generate_balance_sheet",
         "generate_income_statement"]
    )  # fmt: skip
    assert entry.structured_content["success"] is True
    assert unbalanced.is_error and unbalanced.structured_content["code"] == 409
    assert balance.structured_content["balance"] == -10000


def test_stdio_one_line_tools_call(site):
    import subprocess

    line = '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_accounts","arguments":{}},"id":2}\n'
    result = subprocess.run(
        [PYTHON, "manage.py", "mcp_stdio", "--group", "ledger"],
        input=line, cwd=ROOT, env=site.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    answer = json.loads(result.stdout)
    assert answer["id"] == 2 and "accounts" in answer["result"]["structuredContent"]


def test_stdio_error_copies_agree(site):
    """A ledger error's amounts are numbers in structuredContent and in its text copy alike (one encoder)."""
    import subprocess

    site.manage("seed_ledger", "--no-sample")
    lines = [{"accountCode": "500", "debitAmount": 10000}, {"accountCode": "100", "creditAmount": 9000}]
    call = {"name": "create_journal_entry", "arguments": {"date": "2026-04-01", "description": "x", "lines": lines}}
    line = json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": call, "id": 3}) + "\n"
    result = subprocess.run(
        [PYTHON, "manage.py", "mcp_stdio", "--group", "ledger"],
        input=line, cwd=ROOT, env=site.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    answer = json.loads(result.stdout)["result"]
    assert answer["isError"] is True
    assert answer["structuredContent"]["data"]["debitTotal"] == 10000
    assert json.loads(answer["content"][0]["text"]) == answer["structuredContent"]


def test_stdio_answers_a_client_that_skips_initialize(site):
    import subprocess

    result = subprocess.run(
        [PYTHON, "manage.py", "mcp_stdio", "--group", "ledger"],
        input='{"jsonrpc":"2.0","method":"tools/list","id":1}\n',
        cwd=ROOT, env=site.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout + result.stderr  # nothing but protocol messages on stdout
    answer = json.loads(lines[0])
    assert answer["id"] == 1 and isinstance(answer["result"]["tools"], list)


def _ws_url(site, path="/ws"):
    return site.urls[0].replace("http://", "ws://") + path


def test_websocket_with_key_answers_jsonrpc(site):
    async def scenario():
        headers = {"Authorization": f"Bearer {site.key}"}
        async with websockets.connect(_ws_url(site), additional_headers=headers) as ws:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": "req_1", "method": "initialize", "params": {}}))
            init = json.loads(await ws.recv())
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": "req_2", "method": "tools/list"}))
            listed = json.loads(await ws.recv())
            call = {"jsonrpc": "2.0", "id": "req_123", "method": "tools/call",
                    "params": {"name": "test_inband", "arguments": {}}}  # fmt: skip
            await ws.send(json.dumps(call))
            called = json.loads(await ws.recv())
            await ws.send("{broken")
            broken = json.loads(await ws.recv())
            return init, listed, called, broken

    init, listed, called, broken = run(scenario)
    assert init["result"]["serverInfo"]["name"] == "mcpsite"
    assert "test_echo" in [t["name"] for t in listed["result"]["tools"]]
    assert called == {"jsonrpc": "2.0", "id": "req_123", "result": {"status": "error", "error": "bad thing"}}
    assert broken["error"]["code"] == -32700


def test_websocket_at_the_root_serves_the_reminders_tools(site):
    """The reminders seed connects to ws://host:port itself: the root is /ws/reminders."""

    async def scenario():
        headers = {"Authorization": f"Bearer {site.key}"}
        async with websockets.connect(_ws_url(site, "/"), additional_headers=headers) as ws:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": "req_1", "method": "tools/list"}))
            return [t["name"] for t in json.loads(await ws.recv())["result"]["tools"]]

    names = run(scenario)
    assert {"calendar.create", "message.send", "reminder.create"} <= set(names)
    assert "test_echo" not in names and "get_movie_list" not in names


@pytest.mark.parametrize("path", ["/nope", "/ws/nope", "/ws/reminders/extra", "/mcp"])
def test_unknown_websocket_paths_are_refused_at_the_handshake(site, path):
    async def scenario():
        headers = {"Authorization": f"Bearer {site.key}"}
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(_ws_url(site, path), additional_headers=headers):
                pass
        return refused.value.response.status_code

    assert run(scenario) == 403
    logs = "".join(p.read_text() for p in Path(site.env["MCPSITE_VAR_DIR"]).glob("uvicorn-*.log"))
    assert "No route found" not in logs and "Traceback" not in logs


@pytest.mark.parametrize("header", [None, "Bearer mcp_not_a_key"])
def test_websocket_without_valid_key_is_refused_at_the_handshake_with_401(site, header):
    """uvicorn sends the ingress's refusal as the handshake's HTTP answer: no socket opens, no frame is read."""

    async def scenario():
        headers = {"Authorization": header} if header else {}
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(_ws_url(site), additional_headers=headers):
                pass
        return refused.value.response

    response = run(scenario)
    assert response.status_code == 401
    assert json.loads(response.body)["error"]["code"] == 401


def test_rate_limit_is_shared_by_two_server_processes(site):
    """Two uvicorn processes share the database cache: 12 requests at 10/m, alternating between /rpc on
    one process and the WebSocket on the other, give exactly 10 answers and 2 refusals."""
    second = site.urls[1] if len(site.urls) > 1 else site.start_server()
    key, pk = site.create_api_key("limited", "--rate", "10/m")
    echo = {"name": "test_echo", "arguments": {"text": "x"}}

    async def scenario():
        codes = []
        ws_url = second.replace("http://", "ws://") + "/ws"
        async with websockets.connect(ws_url, additional_headers={"Authorization": f"Bearer {key}"}) as ws:
            for i in range(12):
                if i % 2 == 0:
                    response = httpx2.post(
                        f"{site.urls[0]}/rpc",
                        json={"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": echo},
                        headers={"Authorization": f"Bearer {key}"},
                    )
                    codes.append(response.json().get("error", {}).get("code", 200))
                else:
                    await ws.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": echo}))
                    codes.append(json.loads(await ws.recv()).get("error", {}).get("code", 200))
        return codes

    codes = run(scenario)
    assert codes == [200] * 10 + [429, 429]


def test_websocket_rate_limit_answers_429_on_the_socket(site):
    key, pk = site.create_api_key("ws-limited", "--rate", "100/m")

    async def scenario():
        async with websockets.connect(_ws_url(site), additional_headers={"Authorization": f"Bearer {key}"}) as ws:
            answers = []
            for i in range(101):
                call = {"jsonrpc": "2.0", "id": f"req_{i}", "method": "tools/call",
                        "params": {"name": "test_echo", "arguments": {"text": "x"}}}  # fmt: skip
                await ws.send(json.dumps(call))
                answers.append(json.loads(await ws.recv()))
            return answers

    answers = run(scenario)
    assert all("result" in a for a in answers[:100])
    assert answers[100] == {"jsonrpc": "2.0", "id": "req_100", "error": {"code": 429, "message": "Rate limit exceeded"}}


@pytest.mark.parametrize(
    ("body", "content_type", "expected_status"),
    [
        (b"{not json", "application/json", 400),
        (b'{"jsonrpc":"2.0","id":1}', "application/json", 400),
        (b"x" * 9_000_000, "application/json", 413),  # over /mcp's limit (geo's largest request)
    ],
)
def test_http_bad_input_gets_a_specific_error_not_a_500(site, body, content_type, expected_status):
    response = httpx2.post(
        f"{site.urls[0]}/mcp",
        content=body,
        headers={
            "Authorization": f"Bearer {site.key}",
            "Content-Type": content_type,
            "Accept": "application/json, text/event-stream",
        },
    )
    assert response.status_code == expected_status
    assert "Traceback" not in response.text


def test_http_tool_arguments_of_the_wrong_type_are_a_tool_error(site):
    async def scenario(session):
        missing = await session.call_tool("test_echo", {})
        wrong = await session.call_tool("test_echo", {"text": ["a"]})
        boom = await session.call_tool("test_boom", {})
        return missing, wrong, boom

    missing, wrong, boom = run(lambda: mcp_session(f"{site.urls[0]}/mcp", site.key, scenario))
    assert missing.is_error and "'text' is a required property" in missing.structured_content["data"]
    assert wrong.is_error and wrong.structured_content["data"].startswith("text:")
    assert boom.is_error and boom.structured_content["code"] == -32603
    assert "secret internals" not in boom.content[0].text


def test_websocket_oversize_and_binary_messages_get_specific_errors(site):
    async def scenario():
        headers = {"Authorization": f"Bearer {site.key}"}
        async with websockets.connect(_ws_url(site), additional_headers=headers, max_size=None) as ws:
            pad = "x" * 9_000_000  # over /ws's limit (geo's largest request), under the test server's frame bound
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": pad}}))
            oversize = json.loads(await ws.recv())
            await ws.send(b"\x00\x01")
            binary = json.loads(await ws.recv())
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
            still_open = json.loads(await ws.recv())
            return oversize, binary, still_open

    oversize, binary, still_open = run(scenario)
    assert oversize["error"]["code"] == -32600 and "at most" in oversize["error"]["data"]
    assert binary["error"]["code"] == -32600
    assert still_open == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_stdio_malformed_line_gets_a_parse_error_and_the_server_goes_on(site):
    """Unreadable JSON, deep nesting included (issue #24), is a parse error with id null; the next line is served."""
    import subprocess

    deep = ['[' * 100_000, '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_accounts",'
            '"arguments":{"x":' + "[" * 5_000 + "]" * 5_000 + "}}}"]  # fmt: skip
    lines = "".join(f"{line}\n" for line in ["{not json", *deep, '{"jsonrpc":"2.0","method":"tools/list","id":7}'])
    result = subprocess.run(
        [PYTHON, "manage.py", "mcp_stdio", "--group", "ledger"],
        input=lines, cwd=ROOT, env=site.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    answers = [json.loads(line) for line in result.stdout.strip().splitlines()]
    assert [answer["error"]["code"] for answer in answers[:3]] == [-32700] * 3
    assert answers[-1]["id"] == 7 and "tools" in answers[-1]["result"]
    assert "Traceback" not in result.stderr


def test_server_log_shows_no_transport_errors(site):
    """Runs last: clients connected, disconnected and misbehaved above; the servers logged no crash."""
    from pathlib import Path

    logs = "".join(p.read_text() for p in Path(site.env["MCPSITE_VAR_DIR"]).glob("uvicorn-*.log"))
    assert "TypeError" not in logs and "Exception in ASGI application" not in logs
