"""Protocol 2026-07-28 on the HTTP app: routing headers, version negotiation, cache hints, server/discover, and the
bounds of subscriptions/listen (per-key cap, nothing left behind by a client that goes away). The seat-map
deliveries are in cinema/tests/test_listen.py; two processes in test_modern_live.py."""

from __future__ import annotations

import anyio
import pytest
from asgiref.sync import sync_to_async

from mcpsite.mcp import caps, subscriptions
from mcpsite.mcp.subscriptions import PromptsListChanged, ResourceUpdated, ToolsListChanged

from .modern import VERSION, Exchange, envelope, exchange, routing_headers
from .test_serving import answer_kind, running_site

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
ECHO = envelope(1, "tools/call", {"name": "test_echo", "arguments": {"text": "x"}})


@pytest.fixture
def anyio_backend():
    return "asyncio"


# --- routing headers -------------------------------------------------------------------------------


async def test_whitespace_around_a_header_value_is_accepted(api_key):
    """RFC 9110 §5.5: a field value excludes the whitespace around it (conformance
    sep-2243-server-accepts-whitespace-header-value: it was refused with 400 / -32020)."""
    _key, raw = api_key
    headers = [(b"mcp-protocol-version", b" 2026-07-28\t"), (b"mcp-method", b" tools/call "),
               (b"mcp-name", b"  test_echo  ")]  # fmt: skip
    async with running_site() as app:
        status, _headers, body = await exchange(app, raw, ECHO, headers)
    assert status == 200 and body["result"]["structuredContent"] == {"echo": "x", "transport": "http"}


@pytest.mark.parametrize(
    "headers",
    [
        [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"), (b"mcp-name", b"wrong_tool")],
        [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call")],
        [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/list"), (b"mcp-name", b"test_echo")],
        [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"TOOLS/CALL"), (b"mcp-name", b"test_echo")],
        [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-name", b"test_echo")],
    ],
    ids=["other name", "no name", "other method", "method case", "no method"],
)
async def test_a_header_that_disagrees_with_the_body_is_refused_with_header_mismatch(api_key, headers):
    _key, raw = api_key
    async with running_site() as app:
        status, _headers, body = await exchange(app, raw, ECHO, headers)
    assert status == 400 and body["error"]["code"] == HEADER_MISMATCH


async def test_an_unsupported_version_is_refused_naming_the_supported_ones(api_key):
    _key, raw = api_key
    message = envelope(1, "tools/list")
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
    headers = [(b"mcp-protocol-version", b"2099-01-01"), (b"mcp-method", b"tools/list")]
    async with running_site() as app:
        status, _headers, body = await exchange(app, raw, message, headers)
    assert status == 400 and body["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert body["error"]["data"] == {"supported": [VERSION], "requested": "2099-01-01"}


# --- cache hints and discovery ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "ttl_ms"),
    [("tools/list", 300_000), ("prompts/list", 300_000), ("resources/templates/list", 300_000),
     ("resources/list", 60_000)],
)  # fmt: skip
async def test_lists_carry_a_private_cache_hint(api_key, method, ttl_ms):
    """Every list depends on the caller's scopes: private, never shared between credentials."""
    _key, raw = api_key
    async with running_site() as app:
        status, _headers, body = await exchange(app, raw, envelope(1, method))
    assert status == 200
    assert (body["result"]["ttlMs"], body["result"]["cacheScope"]) == (ttl_ms, "private")


async def test_discover_answers_our_capabilities(api_key):
    _key, raw = api_key
    async with running_site() as app:
        status, _headers, body = await exchange(app, raw, envelope(1, "server/discover"))
    result = body["result"]
    assert status == 200 and result["supportedVersions"] == [VERSION]
    capabilities = result["capabilities"]
    assert capabilities["tools"] == {
        "listChanged": True,
        "idempotency": {},
    }  # SEP-3182, a draft (test_idempotency_doors)
    assert capabilities["prompts"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert "completions" in capabilities
    assert capabilities["extensions"] == {"io.modelcontextprotocol/ui": {}}  # MCP Apps (test_mcp_apps.py)


# --- subscriptions/listen: the bus, the cap, leaks ---------------------------------------------------------


def listen(id_: int | str, **notifications) -> dict:
    return envelope(id_, "subscriptions/listen", {"notifications": notifications})


async def wait_until(predicate, seconds: float = 10) -> None:
    with anyio.fail_after(seconds):  # a guard against hanging, not a speed assertion
        while not predicate():
            await anyio.sleep(0.02)


async def test_a_listen_stream_is_acknowledged_and_carries_what_it_asked_for(api_key):
    _key, raw = api_key
    async with running_site() as app:
        stream = await Exchange(app, raw, listen("L1", toolsListChanged=True)).start()
        assert stream.status == 200 and stream.is_sse
        ack = await stream.next_message()
        await subscriptions.bus.publish(PromptsListChanged())  # not asked for
        await subscriptions.bus.publish(ToolsListChanged())
        changed = await stream.next_message()
        await stream.disconnect()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "L1"}
    assert changed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                       "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "L1"}}}  # fmt: skip


async def test_listen_streams_are_capped_per_key_and_leave_nothing_behind(make_api_key, settings):
    """MCP_LISTEN_MAX_PER_KEY streams per key (429 past it, another key unaffected); a client that goes away frees
    its place and its bus subscription."""
    settings.MCP_LISTEN_MAX_PER_KEY = 2
    make = sync_to_async(make_api_key)
    (key, raw), (_other, other_raw) = await make(rate="1000/m"), await make(name="other", rate="1000/m")
    async with running_site() as app:
        before = subscriptions.bus.count()
        held = [await Exchange(app, raw, listen(i, toolsListChanged=True)).start() for i in range(2)]
        for stream in held:
            await stream.next_message()
        status, _headers, refused = await exchange(app, raw, listen(3, toolsListChanged=True))
        other = await Exchange(app, other_raw, listen(4, toolsListChanged=True)).start()
        await other.next_message()
        assert subscriptions.bus.count() == before + 3
        for stream in [*held, other]:
            await stream.disconnect()
        await wait_until(lambda: subscriptions.bus.count() == before and caps.listen_streams.count(key.pk) == 0)
        again = await Exchange(app, raw, listen(5, toolsListChanged=True)).start()
        ack = await again.next_message()
        await again.disconnect()
    assert status == 429 and refused["error"]["code"] == 429
    assert "listen streams" in refused["error"]["message"]
    assert other.status == 200 and ack["method"] == "notifications/subscriptions/acknowledged"


async def test_a_stream_is_closed_gracefully_after_its_lifetime(api_key, settings):
    settings.MCP_LISTEN_MAX_SECONDS = 0.2
    _key, raw = api_key
    async with running_site() as app:
        stream = await Exchange(app, raw, listen("L", toolsListChanged=True)).start()
        await stream.next_message()
        final = await stream.next_message()
        with pytest.raises(EOFError):
            await stream.next_message()
    assert final["id"] == "L" and final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L"


async def test_too_many_resources_in_one_stream_are_refused(api_key, settings):
    settings.MCP_LISTEN_MAX_URIS = 2
    _key, raw = api_key
    uris = [f"mcpsite://cinema/schedules/s00{i}/seats" for i in range(3)]
    async with running_site() as app:
        status, _headers, body = await exchange(app, raw, listen(1, resourceSubscriptions=uris))
    assert status == 400 and body["error"]["code"] == -32602 and "At most 2" in body["error"]["message"]


def test_channel_payloads_round_trip():
    events = [ResourceUpdated(uri="mcpsite://cinema/schedules/s001/seats"), ToolsListChanged(), PromptsListChanged()]
    assert [subscriptions.decode(subscriptions.encode(e)) for e in events] == events
    assert subscriptions.decode("list_changed nothing") is None


async def test_2025_11_25_keeps_json_and_its_own_transport(api_key):
    """The 2026-07-28 SSE default leaves 2025-11-25 as it was: one JSON body per POST."""
    _key, raw = api_key
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with running_site() as app:
        one = await Exchange(app, raw, message, [(b"mcp-protocol-version", b"2025-11-25")]).start()
        body = await one.json()
    assert one.headers[b"content-type"] == b"application/json" and "tools" in body["result"]
    assert routing_headers(ECHO)[2] == (b"mcp-name", b"test_echo")


async def test_a_call_is_one_request_of_the_keys_rate(make_api_key, rate_clock):
    """The SDK checks `Mcp-Param-*` headers against the tool's schema; asked through tools/list, it cost every
    2026-07-28 call a second request of the key's rate (and a third of its throughput, bench_serving): a 3/min key
    got one call and a 429."""
    key, raw = await sync_to_async(make_api_key)(rate="3/m")
    async with running_site() as app:
        answers = [await exchange(app, raw, ECHO) for _ in range(4)]
    assert ["result" in body for _status, _headers, body in answers] == [True, True, True, False]
    assert answers[3][2]["error"]["code"] == 429


def _modern_call(id_, name, arguments=None, meta=None, **params) -> dict:
    if arguments is not None:
        params["arguments"] = arguments
    message = envelope(id_, "tools/call", {"name": name, **params, **({"_meta": meta} if meta else {})})
    return message


_ROUTED = routing_headers(ECHO)
# Every kind of answer a 2026-07-28 tools/call can get: results, in-band and JSON-RPC errors, the SDK's own checks
# (headers, envelope, parameters), a progress token and a log level (the SDK's path), an upstream tool.
MODERN_CASES = [
    (ECHO, None),
    (_modern_call("s-1", "test_echo", {"text": "映画", "count": 2}), None),
    (_modern_call(4, "test_echo", {"count": "two"}), None),
    (_modern_call(5, "test_echo", [1]), None),
    (_modern_call(6, "test_echo"), None),
    (_modern_call(7, "no_such_tool", {}), None),
    (_modern_call(8, "test_conflict", {}), None),
    (_modern_call(9, "test_throttled", {}), None),
    (_modern_call(10, "test_inband", {}), None),
    (_modern_call(11, "test_echo", {"text": "x"}, meta={"progressToken": "p1"}), None),
    (_modern_call(12, "test_echo", {"text": "x"}, meta={"io.modelcontextprotocol/logLevel": "info"}), None),
    (ECHO, [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"), (b"mcp-name", b"other")]),
    (ECHO, [*_ROUTED, (b"mcp-name", b"test_echo")]),
    (ECHO, [*_ROUTED, (b"mcp-param-text", b"y")]),
    (ECHO, [*_ROUTED, (b"accept", b"application/json")]),
    ({**ECHO, "params": {"name": "test_echo", "arguments": {}}}, _ROUTED),
    ({"jsonrpc": "2.0", "id": 13, "method": "tools/call"}, _ROUTED[:2]),
    (_modern_call(14, "test_values", {}), None),
    (_modern_call(15, "test_content_blocks", {}), None),
    # A client that declared a capability: the SDK's kernel (its interaction answers client_can).
    (
        envelope(16, "tools/call", {"name": "test_echo", "arguments": {"text": "x"}}, capabilities={"elicitation": {}}),
        None,
    ),
]


# What each of MODERN_CASES gets from the SDK's 2026-07-28 transport: results, in-band errors, protocol errors with
# the status of the SDK's table (invalid params 400), the header checks' refusals (-32020), a wrong Accept (406).
MODERN_KINDS = [
    (200, "result"), (200, "result"), (200, "isError", -32602), (400, "error", -32602), (200, "isError", -32602),
    (400, "error", -32602), (200, "isError", 409), (200, "error", 429), (200, "isError", "error"), (200, "result"),
    (200, "result"), (400, "error", -32020), (400, "error", -32020), (200, "result"), (406, None),
    (400, "error", -32602), (400, "error", -32602), (200, "result"), (200, "result"), (200, "result"),
]  # fmt: skip


async def test_every_kind_of_modern_call_is_answered_at_the_wire(make_api_key):
    """Each kind of 2026-07-28 tools/call, through the SDK's transport: status, and result or error."""
    (_key, raw) = await sync_to_async(make_api_key)(rate="1000/m")
    answers = []
    async with running_site() as app:
        for message, headers in MODERN_CASES:
            one = await Exchange(app, raw, message, headers).start()
            answers.append(answer_kind(one.status, await one.body()))
    assert answers == MODERN_KINDS


async def test_streams_end_gracefully_when_the_channel_missed_events(api_key):
    """A channel listener back from a lost connection cannot say what it missed: listen streams are closed with
    their final result, so clients re-listen and re-read."""
    _key, raw = api_key
    async with running_site() as app:
        stream = await Exchange(app, raw, listen("gap", toolsListChanged=True)).start()
        await stream.next_message()
        await anyio.to_thread.run_sync(subscriptions.bus.gap)  # what the listener thread calls
        final = await stream.next_message()
    assert final["id"] == "gap" and "result" in final
