"""The HTTP entry span (mcpsite/tracing.py's TracedEntry) with the OpenTelemetry SDK and an in-memory exporter: it
continues the client's trace, names and describes the request without its query, headers or body, marks server
errors, leaves the calendar feed out, and does nothing but decide for a request the sampler leaves out."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON, ParentBased, Sampler
from opentelemetry.trace import SpanKind, StatusCode
from opentelemetry.util.http import parse_excluded_urls

from mcpsite import tracing
from mcpsite.logfilters import redact
from mcpsite.tracing import TracedEntry

TRACE_ID, PARENT_ID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
SECRET = "mcp_secret-api-key-0123456789"


def scope(path: str = "/mcp", method: str = "POST", query: bytes = b"", traceparent: str | None = None) -> dict:
    headers = [(b"authorization", f"Bearer {SECRET}".encode()), (b"user-agent", b"probe/1.0")]
    if traceparent:
        headers.append((b"traceparent", traceparent.encode()))
    return {"type": "http", "method": method, "scheme": "https", "path": path, "query_string": query,
            "http_version": "1.1", "headers": headers, "client": ("192.0.2.7", 40000)}  # fmt: skip


def serve(sampler: Sampler, request: dict, status: int = 200, seen: list | None = None) -> tuple[list, list]:
    """Run one request through TracedEntry; returns the finished spans and the `send` callables the app was given.
    `seen` gets whether the instrumentations (psycopg's, requests') were enabled inside the app."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=sampler)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sends: list = []

    async def app(scope, receive, send) -> None:
        sends.append(send)
        if seen is not None:
            seen.append(is_instrumentation_enabled())
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": SECRET.encode()})

    async def receive() -> dict:
        return {"type": "http.request", "body": SECRET.encode()}

    async def send(message) -> None:
        pass

    asyncio.run(TracedEntry(app, provider.get_tracer("test"))(request, receive, send))
    provider.shutdown()
    return list(exporter.get_finished_spans()), sends


def test_the_entry_span_continues_the_clients_trace_and_records_no_query_header_or_body():
    (span,), _ = serve(ALWAYS_ON, scope(query=f"token={SECRET}".encode(), traceparent=f"00-{TRACE_ID}-{PARENT_ID}-01"))
    assert span.name == "POST /mcp" and span.kind == SpanKind.SERVER
    assert format(span.context.trace_id, "032x") == TRACE_ID and format(span.parent.span_id, "016x") == PARENT_ID
    assert dict(span.attributes) == {
        "http.request.method": "POST",
        "url.scheme": "https",
        "url.path": "/mcp",
        "network.protocol.version": "1.1",
        "client.address": "192.0.2.7",
        "user_agent.original": "probe/1.0",
        "http.response.status_code": 200,
    }
    assert span.status.status_code == StatusCode.UNSET


def test_a_server_error_marks_the_span_and_an_unknown_method_stays_out_of_its_name():
    (span,), _ = serve(ALWAYS_ON, scope(method="BREW"), status=503)
    assert span.name == "HTTP /mcp" and span.attributes["http.request.method"] == "_OTHER"
    assert span.attributes["http.response.status_code"] == 503 and span.status.status_code == StatusCode.ERROR


@pytest.mark.parametrize("path", [f"/calendar/{SECRET}.ics", f"/Calendar/{SECRET}.ics", f"/CALENDAR/{SECRET}"])
def test_the_calendar_feed_is_never_traced(path):
    spans, _ = serve(ALWAYS_ON, scope(path=path, method="GET"))
    assert spans == []


@pytest.mark.parametrize(
    "path", ["/calendar/t.ics", "/Calendar/t.ics", "/CALENDAR/t", "/calendar%2Ft.ics", "/mcp", "/admin/calendars/"]
)
def test_one_rule_for_the_logs_and_the_traces(path):
    """What the log filter redacts is what neither trace entry (ours, Django's instrumentation) records."""
    redacted = redact(path) != path
    django_excluded = parse_excluded_urls(tracing.EXCLUDED_URLS).url_disabled(f"https://example.com{path}")
    traced = bool(serve(ALWAYS_ON, scope(path=path, method="GET"))[0])
    assert redacted == django_excluded == (not traced) == path.lower().startswith(("/calendar/", "/calendar%2f"))


def test_a_request_the_sampler_leaves_out_records_nothing_and_keeps_the_servers_send():
    """Nothing is built for a span that does not record: the app answers through the server's own `send`."""
    spans, sends = serve(ALWAYS_OFF, scope())
    assert spans == [] and sends[0].__qualname__ == "serve.<locals>.send"
    # A client's unsampled traceparent is followed (ParentBased), as OpenTelemetry's default sampler does.
    spans, sends = serve(ParentBased(ALWAYS_ON), scope(traceparent=f"00-{TRACE_ID}-{PARENT_ID}-00"))
    assert spans == [] and sends[0].__qualname__ == "serve.<locals>.send"
    # Control: sampled, the app's send is the entry's own, which records the status.
    spans, sends = serve(ParentBased(ALWAYS_ON), scope())
    assert len(spans) == 1 and sends[0].__qualname__ != "serve.<locals>.send"


def test_the_instrumentations_stand_aside_for_a_request_the_sampler_leaves_out():
    """psycopg's would otherwise wrap each of its queries in a span that does not record; after the request, they
    are on again."""
    seen: list[bool] = []
    serve(ALWAYS_OFF, scope(), seen=seen)
    serve(ParentBased(ALWAYS_ON), scope(traceparent=f"00-{TRACE_ID}-{PARENT_ID}-00"), seen=seen)
    serve(ALWAYS_ON, scope(), seen=seen)  # control: a sampled request's queries are traced
    assert seen == [False, False, True] and is_instrumentation_enabled()


def test_the_default_sampler_follows_the_client_and_samples_a_tenth_of_the_rest(monkeypatch):
    monkeypatch.delenv("OTEL_TRACES_SAMPLER", raising=False)
    default = tracing.sampler()
    assert default is not None
    assert (
        default.get_description() == "ParentBased{root:TraceIdRatioBased{0.1},remoteParentSampled:AlwaysOnSampler,"
        "remoteParentNotSampled:AlwaysOffSampler,localParentSampled:AlwaysOnSampler,localParentNotSampled:AlwaysOffSampler}"
    )
    # A client's sampled traceparent is always followed: its request is traced.
    (span,), _ = serve(default, scope(traceparent=f"00-{TRACE_ID}-{PARENT_ID}-01"))
    assert format(span.context.trace_id, "032x") == TRACE_ID
    # OpenTelemetry's own variable wins (the SDK reads it when no sampler is given).
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "parentbased_always_on")
    assert tracing.sampler() is None


def test_an_exception_out_of_the_app_ends_the_span_as_an_error():
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_ON)
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    async def app(scope, receive, send) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        asyncio.run(TracedEntry(app, provider.get_tracer("test"))(scope(), None, None))  # type: ignore[arg-type]
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code == StatusCode.ERROR and span.end_time is not None
