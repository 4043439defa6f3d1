"""OpenTelemetry traces, exported over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces-only variant) is set.

One trace per request: the HTTP entry (`TracedEntry` below, which continues a client's `traceparent`), the MCP
SDK's own span per message, the dispatcher's span per tool call, Django's request span for its pages, each database
query (psycopg) and each request to another service (requests). Unset, nothing is installed and nothing is sent:
OpenTelemetry's API stays a no-op.

Sampling: `OTEL_TRACES_SAMPLER` (and `OTEL_TRACES_SAMPLER_ARG`) as OpenTelemetry defines them; unset, mcpsite's
default is `parentbased_traceidratio` at DEFAULT_SAMPLE_RATIO: every request whose client sends a sampled
`traceparent`, and a tenth of the others: recording and exporting spans is most of what tracing costs
(docs/operations.md has the figures); `OTEL_TRACES_SAMPLER=parentbased_always_on` traces every request. A request
left out costs little: nothing here builds attributes for a span that does not record (`span.is_recording()`), and
OpenTelemetry's instrumentation suppression is set for it, so psycopg's and requests' instrumentations neither wrap
its queries nor give its outgoing requests a `traceparent`.

What never becomes an attribute: arguments (tool spans carry the tool, its group and the outcome), passwords, API
keys and message texts (no headers or bodies are recorded but the user agent), SQL parameters (psycopg records the
statement with its placeholders), the calendar feed's URLs (their token is the credential: not traced at all), query
strings, and the path and query of outgoing URLs (a webhook URL may carry a secret: only scheme, host and port are
kept).
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from opentelemetry import context, propagate, trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.propagators.textmap import Getter
from opentelemetry.semconv.attributes.client_attributes import CLIENT_ADDRESS
from opentelemetry.semconv.attributes.http_attributes import HTTP_REQUEST_METHOD, HTTP_RESPONSE_STATUS_CODE
from opentelemetry.semconv.attributes.network_attributes import NETWORK_PROTOCOL_VERSION
from opentelemetry.semconv.attributes.url_attributes import URL_PATH, URL_SCHEME
from opentelemetry.semconv.attributes.user_agent_attributes import USER_AGENT_ORIGINAL
from opentelemetry.trace import SpanKind, StatusCode

from mcpsite.core.text import url_origin
from mcpsite.logfilters import FEED_PATH

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.sampling import Sampler

# Paths whose URL is a credential: never traced (the feed token), by the rule the logs redact them by. A regular
# expression searched in the path (and, by Django's instrumentation, in the URL).
EXCLUDED_URLS = FEED_PATH
_EXCLUDED = re.compile(EXCLUDED_URLS)
# Span names carry the method: anything else a client sends is named "HTTP" (a bounded set of names).
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"})

tracer = trace.get_tracer("mcpsite")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def enabled() -> bool:
    return bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def _outgoing_request(span: Any, request: Any) -> None:
    """requests instrumentation hook: keep only the origin of the URL (its path and query may hold a secret)."""
    if span.is_recording():
        kept = url_origin(request.url)
        span.set_attribute("url.full", kept)
        span.set_attribute("http.url", kept)


_configured = False
DEFAULT_SAMPLE_RATIO = 0.1


def sampler() -> Sampler | None:
    """mcpsite's default sampler when OTEL_TRACES_SAMPLER is unset; None (the SDK reads the variables) otherwise."""
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    if os.environ.get("OTEL_TRACES_SAMPLER"):
        return None
    return ParentBased(TraceIdRatioBased(DEFAULT_SAMPLE_RATIO))


def configure() -> bool:
    """Install the tracer provider and the instrumentations once per process; False when tracing is off.

    Called before Django is set up (mcpsite/asgi.py): the MCP SDK takes its tracer when it is imported and Django's
    handler reads its middleware when it is built, so both find the provider and the Django instrumentation here."""
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
    provider = TracerProvider(resource=Resource.create({"service.name": service}), sampler=sampler())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument(excluded_urls=EXCLUDED_URLS)
    PsycopgInstrumentor().instrument(enable_commenter=False)
    RequestsInstrumentor().instrument(request_hook=_outgoing_request)
    _configured = True
    return True


class _HeaderGetter(Getter[list[tuple[bytes, bytes]]]):
    """Reads a propagator's headers (`traceparent`, `tracestate`, `baggage`) from an ASGI scope's header list."""

    def get(self, carrier: list[tuple[bytes, bytes]], key: str) -> list[str] | None:
        name = key.lower().encode("latin-1")
        return [value.decode("latin-1") for header, value in carrier if header == name] or None

    def keys(self, carrier: list[tuple[bytes, bytes]]) -> list[str]:
        return [header.decode("latin-1") for header, _ in carrier]


_headers = _HeaderGetter()


class TracedEntry:
    """The HTTP entry span of each request (and one span for a WebSocket connection), continuing the client's trace
    through the configured propagators (W3C `traceparent` by default). Its attributes (method, scheme, path,
    protocol, client address, user agent, status) are built only when the sampler records the span."""

    def __init__(self, app: ASGIApp, tracer: trace.Tracer) -> None:
        self.app = app
        self.tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        path = scope.get("path", "")
        if kind not in ("http", "websocket") or _EXCLUDED.search(path):
            return await self.app(scope, receive, send)
        headers = scope.get("headers") or []
        method = scope.get("method", "GET") if kind == "http" else "GET"
        name = f"{method if method in _METHODS else 'HTTP'} {path}" if kind == "http" else path
        parent = propagate.extract(headers, getter=_headers)
        span = self.tracer.start_span(name, context=parent, kind=SpanKind.SERVER)
        if not span.is_recording():
            # Left out by the sampler: the request goes on in its context (its spans follow the decision), and
            # nothing else is done for it. The instrumentations stand aside too: psycopg's would still wrap each
            # query in a span that does not record, a cost on every query.
            token = context.attach(trace.set_span_in_context(span, parent))
            try:
                with suppress_instrumentation():
                    return await self.app(scope, receive, send)
            finally:
                context.detach(token)
        with trace.use_span(span, end_on_exit=True):
            span.set_attributes(_request_attributes(scope, method, path, headers))

            async def traced_send(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status = message["status"]
                    span.set_attribute(HTTP_RESPONSE_STATUS_CODE, status)
                    if status >= 500:
                        span.set_status(StatusCode.ERROR)
                await send(message)

            await self.app(scope, receive, traced_send)


def _request_attributes(scope: Scope, method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        HTTP_REQUEST_METHOD: method if method in _METHODS else "_OTHER",
        URL_SCHEME: scope.get("scheme", "http"),
        URL_PATH: path,
        NETWORK_PROTOCOL_VERSION: scope.get("http_version", "1.1"),
    }
    if client := scope.get("client"):
        attributes[CLIENT_ADDRESS] = client[0]
    for header, value in headers:
        if header == b"user-agent":
            attributes[USER_AGENT_ORIGINAL] = value.decode("latin-1")
            break
    return attributes


def traced_asgi(app: ASGIApp) -> ASGIApp:
    """The ASGI application with its HTTP entry span, when tracing is on."""
    if not configure():
        return app
    return TracedEntry(app, trace.get_tracer("mcpsite"))  # the provider's own tracer, not a proxy to it


def recording() -> bool:
    """Whether this request's trace records (its entry span was sampled); False when tracing is off."""
    return trace.get_current_span().is_recording()


def force_flush() -> None:
    provider = trace.get_tracer_provider()
    flush = getattr(provider, "force_flush", None)
    if flush is not None:
        flush()
