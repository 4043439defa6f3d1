"""Hostile arguments for every product tool, generated from each tool's own inputSchema, against a real server.

Wrong types, integral floats (5.0, 1e308), huge and negative numbers, NaN/Infinity, huge strings and arrays, NUL,
control characters and lone surrogates, unknown keys, dates that do not exist — mixed with the seeds' real ids so
calls also reach the services. Every tool is driven through `/rpc` (batches of 50, tool-name and tools/call styles)
and through MCP Streamable HTTP. Nothing may answer -32603 or a 5xx, drop the connection or log a traceback, and a
-32602 must name the field it refuses. Deterministic (derandomize); the full count runs in the PostgreSQL pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from django.conf import settings as django_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from geo.tests.fake_galuchat import PATHS, answer_for
from geo.tools import request_bytes as geo_request_bytes
from mcpsite.mcp import registry

from .live import LoopbackUpstream, live_site, loopback_upstream

pytestmark = pytest.mark.slow

ON_POSTGRES = "postgresql" in django_settings.DATABASES["default"]["ENGINE"]
BATCH = 50
RPC_BATCHES = 400 if ON_POSTGRES else 30  # 20,000 calls on PostgreSQL, 1,500 on SQLite
MCP_ROUNDS, MCP_CALLS = (50, 10) if ON_POSTGRES else (20, 10)
GEO_MAX_POINTS = 2000  # the live site's RESOLVE_POINTS_MAX_POINTS, so the 2,001-point calls meet the limit
# /rpc and /mcp serve every tool: their body limit is geo's largest request on the live site.
MAX_BODY = max(django_settings.MCP_MAX_BODY_BYTES, geo_request_bytes(GEO_MAX_POINTS))
SETTINGS = {
    "derandomize": True,
    "deadline": None,
    "database": None,
    "suppress_health_check": list(HealthCheck),
    "print_blob": False,
}

# --- a loopback GaluchatAPI (the live server is another process: `responses` cannot reach it) ---------------


class _Galuchat(LoopbackUpstream):
    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        granularity = PATHS.get(self.path.split("?")[0])
        points = body.get("points") or []
        if granularity is None or (points and points[0][0] % 5 == 0):
            # Some upstream failures too, so the error paths (and their logging) are exercised.
            payload, status = b"maintenance", 503
        else:
            payload, status = json.dumps(answer_for(granularity, points)).encode(), 200
        self.reply(status, payload)


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    with loopback_upstream(_Galuchat) as galuchat, live_site(live_template, tmp_path_factory.mktemp("hostile")) as live:
        live.env.update(
            GALUCHAT_BASE_URL=galuchat,
            GALUCHAT_REQUESTS_PER_SECOND="10000",
            RESOLVE_POINTS_MAX_POINTS=str(GEO_MAX_POINTS),
        )
        live.manage("seed_demo")
        live.key = live.manage(
            "create_api_key", "--name", "hostile", "--scopes", "all", "--owner", "demo", "--rate", "1000000/m",
            "--quiet",
        ).strip()  # fmt: skip
        live.start_server()
        yield live
        logs = "".join(p.read_text() for p in Path(live.env["MCPSITE_VAR_DIR"]).glob("uvicorn-*.log"))
        assert "Traceback" not in logs, logs[-5000:]
        assert live.processes[0].poll() is None, "the server died"


# --- strategies from the schemas --------------------------------------------------------------------------------

# The seeds' real ids and values, so calls get past the schema and into the services.
KNOWN = [
    "s001", "s002", "m001", "m002", "t01", "r20260220001", "A1", "A3", "J10", "Z99", "ａ１", "mypassword123",
    "100", "400", "500", "999", "asset", "山田花子", "ct_1", "daily", "weekly", "monthly", "every 5 minutes",
    "FREQ=MINUTELY", "sms", "email", "むぎぼー", "カレンダー", "スタームービー", "ｽﾀｰﾑｰﾋﾞｰ",
    "2026-02-20", "2026-02-30", "2026-13-01", "2025-02-29", "0000-01-01", "9999-12-31", "2026-2-3", "20260220",
    "2030-01-01T07:00:00+09:00", "2026-02-30T07:00:00", "9999-12-31T23:59:59+14:00", "0001-01-01T00:00:00Z",
    "2030-01-01T25:61:00", "P1D", "", " ", "\u3000",
]  # fmt: skip
NASTY = [
    "\x00", "a\x00b", "\ud800", "x\udfffy", "\u202e", "\ufeff", "\r\n", "\t", "\x1b[2J", "%s%n", "${x}", "{{7*7}}",
    "' OR 1=1 --", '"; DROP TABLE x; --', "<script>", "../../etc/passwd", "NaN", "Infinity", "-0", "1e308",
    "\U0001f600" * 3, "́" * 50,
]  # fmt: skip


# Hypothesis pays for every element it draws, so big values are built by repetition from one drawn element: a
# 3,000-item array costs no more to generate than a 3-item one, and a batch of 50 calls stays quick to draw.
BIG_SIZES = [129, 1_001, 3_000, 15_000]


def _repeated(element, sizes=BIG_SIZES):
    return st.builds(lambda item, n: item * n if isinstance(item, str) else [item] * n, element, st.sampled_from(sizes))


def _text(big: bool = True):
    options = [
        st.sampled_from(KNOWN),
        st.sampled_from(KNOWN),
        st.sampled_from(NASTY),
        st.text(max_size=12),
        st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=6),
    ]
    if big:  # only at the top level: a huge string inside a huge array would only test the body-size limit
        options.append(_repeated(st.sampled_from(["x", "あ", "\x01", " ", "\x00"])))
    return st.one_of(options)


INTEGRAL_FLOATS = [5.0, 1.0, 0.0, -1.0, 1e308, -1e308, 1e19, 2.0**63, 9.0e15]
BIG_INTS = [0, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 2**70, 10**30]
ODD_FLOATS = [1.5, -0.0, 5e-324, float("nan"), float("inf"), float("-inf"), 1.7976931348623157e308]


def _scalar():
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        _text(big=False),
        st.sampled_from(INTEGRAL_FLOATS + ODD_FLOATS),
    )


ANYTHING = st.recursive(
    _scalar(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text(big=False), inner, max_size=3),
    max_leaves=4,
)


def _integer():
    return st.one_of(
        st.integers(-3, 120),
        st.integers(-3, 120),
        st.sampled_from(INTEGRAL_FLOATS),
        st.sampled_from(BIG_INTS),
        st.sampled_from(ODD_FLOATS),
    )


def _number():
    return st.one_of(
        st.integers(-200, 20_000),
        st.floats(-1e6, 1e6),
        st.sampled_from(INTEGRAL_FLOATS + ODD_FLOATS + BIG_INTS),
        st.floats(),
    )


def _geo_point():
    coordinate = st.one_of(st.floats(-200, 200), st.integers(-200, 200), st.sampled_from(ODD_FLOATS + BIG_INTS))
    return st.one_of(
        st.fixed_dictionaries(
            {"lat": coordinate, "lon": coordinate}, optional={"ref": st.one_of(st.none(), _text(big=False))}
        ),
        ANYTHING,
    )


def _spread(points: list, n: int) -> list:
    """n distinct points around the drawn ones (distinct, so the upstream gets real requests)."""
    base = [p for p in points if isinstance(p, dict) and isinstance(p.get("lat"), int | float)] or [{"lat": 35}]
    return [{**base[i % len(base)], "lat": 30 + (i % 1000) / 100, "lon": 130 + i / 1000} for i in range(n)]


def values_for(schema: dict, name: str = "", big: bool = True):
    """Valid-looking and hostile values for one schema node (wrong types are always among them)."""
    if name == "points":  # geo leaves the points' shape to its own rules (the seed's schema has no items)
        small = st.lists(_geo_point(), max_size=6)
        return st.one_of(small, small, st.builds(_spread, small, st.sampled_from([1_001, 2_001])))
    kind = schema.get("type")
    options = [ANYTHING]
    if "enum" in schema:
        options += [st.sampled_from(schema["enum"])] * 3
    if kind == "string":
        options += [_text(big)] * 3
    elif kind == "integer":
        options += [_integer()] * 3
    elif kind == "number":
        options += [_number()] * 3
    elif kind == "array":
        item = values_for(schema.get("items", {}), big=False)
        options += [st.lists(item, max_size=5)] * 3 + ([_repeated(item, BIG_SIZES[:3])] if big else [])
    elif kind == "object":
        options += [arguments_for(schema, big)] * 3
    return st.one_of(options)


def arguments_for(schema: dict, big: bool = True):
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    fields = {key: values_for(sub, key, big) for key, sub in properties.items()}
    present = st.fixed_dictionaries(
        {k: v for k, v in fields.items() if k in required},
        optional={k: v for k, v in fields.items() if k not in required},
    )
    return st.builds(
        lambda base, drop, unknown: {**{k: v for k, v in base.items() if k not in drop}, **unknown},
        present,
        st.sets(st.sampled_from(sorted(properties) or [""]), max_size=1) if properties else st.just(set()),
        st.dictionaries(st.sampled_from(["extra", "\x00", "\ud800", "__proto__", "x" * 300]), ANYTHING, max_size=2),
    )


def product_tools() -> list[registry.ToolSpec]:
    # App-only tools (MCP Apps) do not exist for these clients, which negotiate no Apps (test_mcp_apps.py).
    return [spec for spec in registry.tools() if not spec.name.startswith("test_") and not spec.app_only]


def call_strategy():
    specs = product_tools()
    return st.one_of([st.tuples(st.just(spec), arguments_for(spec.input_schema)) for spec in specs])


# --- checks -------------------------------------------------------------------------------------------------------


def _names_the_field(spec: registry.ToolSpec, arguments, text: str) -> bool:
    names = set(spec.input_schema.get("properties", {})) | {"Arguments", "params", "arguments"}
    if isinstance(arguments, dict):
        # A key that is not valid Unicode is named escaped (\\ud800), so the answer stays encodable.
        names |= {k.encode(errors="backslashreplace").decode() for k in arguments if isinstance(k, str) and k}
    return any(name in text for name in names)


def check_error(spec, arguments, error: dict) -> None:
    assert error["code"] != -32603, (spec.name, error)
    if error["code"] == -32602:
        text = f"{error.get('message', '')} {json.dumps(error.get('data'), ensure_ascii=False)}"
        assert _names_the_field(spec, arguments, text), (spec.name, error)


def check_result(spec, arguments, result) -> None:
    if not isinstance(result, dict):
        return
    if spec.name == "resolve_points" and "error" in result:  # geo's in-band seed error
        assert result["error"]["code"] != "INTERNAL", result
        if result["error"]["code"] == "INVALID_INPUT":
            assert "points" in f"{result['error'].get('location')} {result['error']['message']}" or _names_the_field(
                spec, arguments, result["error"]["message"]
            ), result
    if result.get("status") == "error":  # reminders' in-band seed error
        assert "Internal error" not in result["error"], (spec.name, result)
    if result.get("isError"):  # an MCP tool result
        structured = result.get("structuredContent") or {}
        if "code" in structured:
            check_error(spec, arguments, structured)
        else:
            check_result(spec, arguments, structured)


def _encode(value) -> str:
    # Python's json writes NaN/Infinity (the server's parser accepts them) and \\u-escapes lone surrogates.
    return json.dumps(value)


# --- the tests ----------------------------------------------------------------------------------------------------


def test_hostile_arguments_over_rpc_batches(site):
    counted = {"calls": 0}
    headers = {"Authorization": f"Bearer {site.key}", "Content-Type": "application/json"}
    url = f"{site.urls[0]}/rpc"

    with httpx2.Client(timeout=120) as http:

        def send(calls: list) -> None:
            """POST the calls as one batch; a batch over the body limit goes as two (huge bodies are the
            body-size guard's business, not this test's)."""
            batch = []
            for i, ((spec, arguments), by_name) in enumerate(calls):
                if by_name:  # the cinema seed's style: the tool's name is the method
                    batch.append({"jsonrpc": "2.0", "id": i, "method": spec.name, "params": arguments})
                else:
                    params = {"name": spec.name, "arguments": arguments}
                    batch.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
            body = _encode(batch).encode()
            if len(body) > MAX_BODY and len(calls) > 1:
                send(calls[: len(calls) // 2])
                send(calls[len(calls) // 2 :])
                return
            response = http.post(url, content=body, headers=headers)
            if len(body) > MAX_BODY:
                assert response.status_code == 413
                return
            assert response.status_code == 200, (response.status_code, response.text[:2000])
            answers = {answer["id"]: answer for answer in response.json()}
            assert len(answers) == len(calls)
            for i, ((spec, arguments), _by_name) in enumerate(calls):
                answer = answers[i]
                if "error" in answer:
                    check_error(spec, arguments, answer["error"])
                else:
                    check_result(spec, arguments, answer["result"])
            counted["calls"] += len(calls)

        @settings(max_examples=RPC_BATCHES, **SETTINGS)
        @given(calls=st.lists(st.tuples(call_strategy(), st.booleans()), min_size=BATCH, max_size=BATCH))
        def run(calls):
            send(calls)

        run()
    assert counted["calls"] >= RPC_BATCHES * BATCH * 0.99  # a lone call over the body limit is rare


def _sse_message(response) -> dict | None:
    """The JSON-RPC answer, or None for a transport-level refusal (4xx without a JSON-RPC body)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    if not data:
        assert 400 <= response.status_code < 500, (response.status_code, response.text[:2000])
        return None
    return json.loads(data[-1])


def test_hostile_arguments_over_mcp_streamable_http(site):
    counted = {"calls": 0}
    url = f"{site.urls[0]}/mcp"
    headers = {"Authorization": f"Bearer {site.key}", "Accept": "application/json, text/event-stream"}
    client = {"name": "hostile", "version": "1"}
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}

    with httpx2.Client(timeout=120) as http:
        opened = http.post(url, json=init, headers=headers)
        assert opened.status_code == 200
        headers = {**headers, "mcp-protocol-version": "2025-11-25"}
        if "mcp-session-id" in opened.headers:  # stateless by default (README "Production"): no session to name
            headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)

        @settings(max_examples=MCP_ROUNDS, **SETTINGS)
        @given(calls=st.lists(call_strategy(), min_size=MCP_CALLS, max_size=MCP_CALLS))
        def run(calls):
            for i, (spec, arguments) in enumerate(calls, start=1):
                message = {"jsonrpc": "2.0", "id": i, "method": "tools/call"}
                message["params"] = {"name": spec.name, "arguments": arguments}
                body = _encode(message).encode()
                response = http.post(url, content=body, headers=headers)
                if len(body) > MAX_BODY:
                    assert response.status_code == 413
                    continue
                assert response.status_code < 500, (response.status_code, response.text[:2000])
                answer = _sse_message(response)
                counted["calls"] += 1
                if answer is None:  # refused by the transport with a 4xx: answered, not crashed
                    continue
                if "error" in answer:
                    check_error(spec, arguments, answer["error"])
                else:
                    check_result(spec, arguments, answer["result"])

        run()
    assert counted["calls"] >= MCP_ROUNDS * MCP_CALLS * 0.95


def test_every_product_tool_is_fuzzed():
    assert len(product_tools()) == 20
    assert {spec.name for spec in product_tools()} >= {"get_movie_list", "resolve_points", "message.send"}
