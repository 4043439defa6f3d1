"""OpenTelemetry traces, exported over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces-only variant) is set.

One trace per request: the HTTP entry (the ASGI instrumentation, which continues a client's `traceparent`), the MCP
SDK's own span per message, the dispatcher's span per tool call, Django's request span for its pages, each database
query (psycopg) and each request to another service (requests). Unset, nothing is installed and nothing is sent:
OpenTelemetry's API stays a no-op.

What never becomes an attribute: arguments (tool spans carry the tool, its group and the outcome), passwords, API
keys and message texts (no headers or bodies are recorded), SQL parameters (psycopg records the statement with its
placeholders), the calendar feed's URLs (their token is the credential: not traced at all), and the path and query of
outgoing URLs (a webhook URL may carry a secret: only scheme, host and port are kept).
"""

from __future__ import annotations

import os
from typing import Any

from opentelemetry import trace

from mcpsite.core.text import url_origin

# Paths whose URL is a credential: never traced (the feed token).
EXCLUDED_URLS = "calendar/"

tracer = trace.get_tracer("mcpsite")


def enabled() -> bool:
    return bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def _outgoing_request(span: Any, request: Any) -> None:
    """requests instrumentation hook: keep only the origin of the URL (its path and query may hold a secret)."""
    if span.is_recording():
        kept = url_origin(request.url)
        span.set_attribute("url.full", kept)
        span.set_attribute("http.url", kept)


_configured = False


def configure() -> bool:
    """Install the tracer provider and the instrumentations once per process; False when tracing is off."""
    global _configured
    if not enabled():
        return False
    if _configured:
        return True
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.requests import RequestsInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    service = os.environ.get("OTEL_SERVICE_NAME", "mcpsite")
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument(excluded_urls=EXCLUDED_URLS)
    PsycopgInstrumentor().instrument(enable_commenter=False)
    RequestsInstrumentor().instrument(request_hook=_outgoing_request)
    _configured = True
    return True


def traced_asgi(app: Any) -> Any:
    """The ASGI application with its HTTP entry span (continuing a client's `traceparent`), when tracing is on."""
    if not configure():
        return app
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

    # Not a span per ASGI message (receive, send): they say nothing the request's span does not, and cost a third of
    # what tracing adds to a call (bench/bench_observability.py).
    return OpenTelemetryMiddleware(app, excluded_urls=EXCLUDED_URLS, exclude_spans=["receive", "send"])


def force_flush() -> None:
    provider = trace.get_tracer_provider()
    flush = getattr(provider, "force_flush", None)
    if flush is not None:
        flush()
