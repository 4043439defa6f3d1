"""Metrics and traces with the real components operators run: Debian's Prometheus scraping two uvicorn workers, and
the OpenTelemetry SDK's OTLP/HTTP exporter sending to a receiver on loopback that decodes what it gets."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest

from .live import free_port, live_site

pytestmark = pytest.mark.django_db(transaction=True)


def rpc(url: str, key: str, method: str, params: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx2.post(f"{url}/rpc", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30).json()


def wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def prometheus_binary() -> str:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("Debian's prometheus is not installed (make test installs it: apt-get install prometheus)")
    return binary


def test_prometheus_counts_calls_refusals_and_errors_across_two_workers(live_template, tmp_path, prometheus_binary):
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    with live_site(live_template, tmp_path) as site:
        limited, _pk = site.create_api_key("limited", "--scopes", "cinema", "--rate", "2/m")
        url = site.start_server(workers=2, PROMETHEUS_MULTIPROC_DIR=str(metrics_dir))
        for _ in range(7):
            assert "result" in rpc(url, site.key, "get_movie_list", {})
        for _ in range(2):  # a show that does not exist: the tool's 404
            assert rpc(url, site.key, "get_seat_availability", {"schedule_id": "nope"})["error"]["code"] == 404
        answers = [rpc(url, limited, "get_movie_list", {}) for _ in range(5)]
        assert sum("result" in a for a in answers) == 2
        assert sum(a.get("error", {}).get("code") == 429 for a in answers) == 3

        # Both workers wrote their own files; /metrics (answered by either) sums them.
        exposition = httpx2.get(f"{url}/metrics", timeout=10)
        assert exposition.status_code == 200
        check = subprocess.run(
            ["promtool", "check", "metrics"], input=exposition.text, capture_output=True, text=True, timeout=60
        )
        assert check.returncode == 0, check.stdout + check.stderr

        port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            f"  - job_name: mcpsite\n    static_configs: [{{targets: ['{url.removeprefix('http://')}']}}]\n"
        )
        prometheus = subprocess.Popen(
            [prometheus_binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            api = f"http://127.0.0.1:{port}/api/v1/query"

            def query(expression: str) -> float | None:
                try:
                    found = httpx2.get(api, params={"query": expression}, timeout=5).json()["data"]["result"]
                except (httpx2.HTTPError, ValueError, KeyError):
                    return None
                return float(found[0]["value"][1]) if found else None

            ok = 'sum(mcpsite_tool_calls_total{tool="get_movie_list",outcome="ok",transport="rpc"})'
            assert wait_for(lambda: query(ok) == 9, what="9 ok calls in Prometheus")
            errors = 'sum(mcpsite_tool_calls_total{tool="get_seat_availability",outcome="error"})'
            assert query(errors) == 2
            assert query('sum(mcpsite_tool_calls_total{outcome="rate_limited"})') == 3
            assert query('sum(mcpsite_rate_limited_total{reason="api_key"})') == 3
            assert query('sum(mcpsite_tool_call_seconds_count{tool="get_movie_list"})') == 12  # refusals too
        finally:
            prometheus.terminate()
            prometheus.wait(timeout=30)
    assert len({path.name.rsplit("_", 1)[-1] for path in metrics_dir.glob("counter_*.db")}) == 2  # two processes


class OtlpReceiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP trace receiver: decodes each export with OpenTelemetry's protobuf types and keeps the spans."""

    spans: list = []
    scopes: dict[bytes, str] = {}  # span id: the name of the instrumentation that made it
    lock = threading.Lock()

    def do_POST(self):  # noqa: N802
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self.lock:
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    self.spans.extend(scope.spans)
                    self.scopes.update((span.span_id, scope.scope.name) for span in scope.spans)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def attribute_values(span) -> list[str]:
    values = []
    for attribute in span.attributes:
        value = attribute.value
        values.append(str(getattr(value, value.WhichOneof("value"))) if value.WhichOneof("value") else "")
    return values


@pytest.fixture
def otlp_endpoint():
    """An OTLP/HTTP receiver on loopback for the test (its spans in OtlpReceiver.spans); yields its URL."""
    OtlpReceiver.spans, OtlpReceiver.scopes = [], {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), OtlpReceiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def spans_of(trace_id: str, *, once_named: str) -> list:
    """The spans received for `trace_id`, once one of them is named `once_named`."""

    def found():
        with OtlpReceiver.lock:
            spans = [s for s in OtlpReceiver.spans if s.trace_id.hex() == trace_id]
        return spans if any(s.name == once_named for s in spans) else None

    return wait_for(found, what=f"the spans of trace {trace_id}")


def test_one_trace_per_request_joined_to_the_client_and_no_secret_in_any_attribute(
    live_template, tmp_path, otlp_endpoint
):
    password = "s3cret-reservation-pw"
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with live_site(live_template, tmp_path) as site:
        url = site.start_server(OTEL_EXPORTER_OTLP_ENDPOINT=otlp_endpoint, OTEL_BSP_SCHEDULE_DELAY="200")
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {
                "name": "get_reservation_details",
                "arguments": {"reservation_id": "r20990101001", "reservation_password": password},
            },
        }

        def post_mcp(message: dict, traced_as: str) -> httpx2.Response:
            headers = {
                "Authorization": f"Bearer {site.key}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
                "traceparent": f"00-{traced_as}-{parent_id}-01",
            }
            return httpx2.post(f"{url}/mcp", json=message, headers=headers, timeout=30)

        answer = post_mcp(call, trace_id)
        assert answer.status_code == 200 and answer.json()["result"]["isError"] is True  # no such reservation
        spans = spans_of(trace_id, once_named="tool get_reservation_details")
        # The same call with a progress token: not a plain call, so the SDK's kernel answers it (the plain one went
        # straight to the dispatcher inside the SDK's middleware): its MCP span must be the same.
        kernel_trace_id = "6d0e0e47364bf92f3577b34da6a3ce92"
        kernel_call = {**call, "params": {**call["params"], "_meta": {"progressToken": "p-1"}}}
        kernel_answer = post_mcp(kernel_call, kernel_trace_id)
        assert kernel_answer.json()["result"] == answer.json()["result"]
        kernel_spans = spans_of(kernel_trace_id, once_named="tool get_reservation_details")
        # A Django view (/rpc) in a trace of its own: the entry, Django's span, the tool.
        rpc_trace_id = "5ce929d0e0e47364bf92f3577b34da6a"
        rpc_answer = httpx2.post(
            f"{url}/rpc",
            json={**call, "method": "get_reservation_details", "params": call["params"]["arguments"]},
            headers={"Authorization": f"Bearer {site.key}", "traceparent": f"00-{rpc_trace_id}-{parent_id}-01"},
            timeout=30,
        )
        assert rpc_answer.status_code == 200 and "error" in rpc_answer.json()
        rpc_spans = spans_of(rpc_trace_id, once_named="tool get_reservation_details")
    rpc_by_id = {span.span_id: span for span in rpc_spans}
    rpc_tool = next(s for s in rpc_spans if s.name == "tool get_reservation_details")
    django_span = rpc_by_id[rpc_tool.parent_span_id]
    assert OtlpReceiver.scopes[django_span.span_id] == "opentelemetry.instrumentation.django"
    rpc_entry = rpc_by_id[django_span.parent_span_id]
    assert rpc_entry.name == "POST /rpc" and rpc_entry.parent_span_id.hex() == parent_id
    by_id = {span.span_id: span for span in spans}
    tool = next(s for s in spans if s.name == "tool get_reservation_details")
    sdk = by_id[tool.parent_span_id]
    assert sdk.name == "tools/call get_reservation_details"
    entry = by_id[sdk.parent_span_id]  # the HTTP entry span continues the client's trace
    assert entry.name.startswith("POST") and entry.parent_span_id.hex() == parent_id
    if site.env.get("DATABASE_URL", "").startswith("postgres"):
        assert any(s.parent_span_id == tool.span_id for s in spans)  # the tool's queries
    kernel_by_id = {span.span_id: span for span in kernel_spans}
    kernel_tool = next(s for s in kernel_spans if s.name == "tool get_reservation_details")
    kernel_sdk = kernel_by_id[kernel_tool.parent_span_id]
    assert OtlpReceiver.scopes[sdk.span_id] == OtlpReceiver.scopes[kernel_sdk.span_id] == "mcp-python-sdk"
    assert (kernel_sdk.name, kernel_sdk.kind, kernel_sdk.status) == (sdk.name, sdk.kind, sdk.status)
    assert sorted(map(str, kernel_sdk.attributes)) == sorted(map(str, sdk.attributes))
    assert kernel_by_id[kernel_sdk.parent_span_id].name.startswith("POST")
    everything = " ".join(v for span in spans + kernel_spans + rpc_spans for v in [span.name, *attribute_values(span)])
    assert password not in everything
    assert site.key not in everything and site.key[:16] not in everything
    assert json.dumps(call["params"]["arguments"]) not in everything


def test_nothing_is_exported_without_an_endpoint(tmp_path):
    """Unset, OpenTelemetry stays the API's no-op: no provider, no exporter, no span ids in the logs."""
    script = (
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'mcpsite.settings'); django.setup();"
        "import mcpsite.asgi; from opentelemetry import trace;"
        "print(type(trace.get_tracer_provider()).__name__)"
    )
    env = {"MCPSITE_VAR_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).parents[2])}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "ProxyTracerProvider", result.stderr
