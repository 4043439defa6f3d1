"""Plain HTTP endpoints: seed JSON-RPC (`/rpc`), seed REST (`/mcp/tools/*`, `/mcp/<group>/tools/*`), `/healthz`."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse, JsonResponse
from rest_framework.exceptions import APIException
from rest_framework.views import APIView

from mcpsite.core import limits
from mcpsite.core.db import database_answers
from mcpsite.core.errors import (
    ApplicationError,
    InvalidParams,
    MethodNotFound,
    MissingCredentials,
    PayloadTooLarge,
    Unauthorized,
)
from mcpsite.core.jsonutil import dumps

from . import dispatch, idempotency, jsonrpc, outages, registry
from .auth import SCOPE_PRINCIPAL
from .refusals import Shape, django_refusal
from .registry import CallContext, tool_groups


def healthz(request):
    checks = {}
    try:
        database_answers()
        checks["database"] = "ok"
    except Exception as exc:  # report, don't raise: this page exists to say what is broken
        checks["database"] = f"error: {type(exc).__name__}"
    try:
        cache.set("healthz", "1", 5)
        checks["cache"] = "ok" if cache.get("healthz") == "1" else "error: value not stored"
    except Exception as exc:
        checks["cache"] = f"error: {type(exc).__name__}"
    healthy = all(v == "ok" for v in checks.values())
    return JsonResponse({"status": "ok" if healthy else "error", "checks": checks}, status=200 if healthy else 503)


class _ToolEndpoint(APIView):
    """Shared plumbing behind the ingress (mcpsite.guard: principal, body bounds, REST accounting): DRF's method
    handling and content negotiation, JSON parsing; errors never escape as HTML or 500 pages."""

    transport = "rpc"
    shape: Shape = "jsonrpc"
    parser_classes: list = []  # bodies are read raw, so malformed JSON gets our own error shape

    def context(self, request) -> CallContext:
        api_key = request.auth
        if api_key is None and settings.MCP_REQUIRE_API_KEY:
            raise MissingCredentials()
        ctx = dispatch.call_context(transport=self.transport, api_key=api_key)
        ctx = self.call_ctx = idempotency.keyed(ctx, header=request.headers.get(idempotency.KEY_HEADER))
        if self.transport == "rest" and SCOPE_PRINCIPAL not in request.META:
            dispatch.account(ctx)  # served without the ingress (a WSGI server, Django's test client)
        return ctx

    def body(self, request) -> bytes:
        """The body; bounded by the ingress, and here too where a request is served without it."""
        limit = registry.max_request_bytes()
        length = request.META.get("CONTENT_LENGTH") or "0"
        if not length.isdigit() or int(length) > limit:
            raise PayloadTooLarge(data=f"The body may be at most {limit} bytes")
        return request.body

    def handle_exception(self, exc):
        if isinstance(exc, ApplicationError):
            return self.error_response(exc)
        if isinstance(exc, APIException) and exc.status_code == 401:
            return self.error_response(Unauthorized())
        return super().handle_exception(exc)

    def error_response(self, error: ApplicationError) -> HttpResponse:
        return django_refusal(error, self.shape)

    def finalize_response(self, request, response, *args, **kwargs):
        # Tell a refused client when to come back (the seed's error body stays as it is): the rest of its key's
        # window, or the wait of a dependency that does not answer.
        if response.status_code == 429 and request.auth is not None:
            retry_after = limits.api_key_retry_after(request.auth)
            if retry_after is not None:
                response["Retry-After"] = str(retry_after)
        elif response.status_code == 503 and not response.has_header("Retry-After"):
            response["Retry-After"] = str(outages.RETRY_AFTER)
        if (ctx := getattr(self, "call_ctx", None)) is not None and idempotency.replayed(ctx):
            response[idempotency.REPLAYED_HEADER] = "true"
        return super().finalize_response(request, response, *args, **kwargs)


def _json(data, status: int = 200) -> HttpResponse:
    return HttpResponse(dumps(data), status=status, content_type="application/json; charset=utf-8")


class JsonRpcView(_ToolEndpoint):
    """`POST /rpc`: JSON-RPC 2.0 with a tool name as the method (the cinema seed's samples)."""

    def post(self, request):
        ctx = self.context(request)
        payload = jsonrpc.parse_counted(self.body(request), ctx, request.META)
        answer = jsonrpc.handle_payload(payload, ctx, allow_tool_methods=True)
        if answer is None:
            return HttpResponse(status=204)
        return _json(answer, status=self._status(answer))

    @staticmethod
    def _status(answer) -> int:
        # A lone request refused for auth, rate or an unavailable dependency keeps that HTTP status; others are 200.
        if isinstance(answer, dict) and "error" in answer:
            return {401: 401, 429: 429, 503: 503}.get(answer["error"]["code"], 200)
        return 200


class _RestView(_ToolEndpoint):
    transport = "rest"
    shape: Shape = "rest"

    def arguments(self, request) -> dict:
        raw = self.body(request)
        payload = jsonrpc.parsed(request.META, raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise InvalidParams("The body must be a JSON object")
        return payload

    @staticmethod
    def groups(group: str | None) -> list[str] | None:
        """`/mcp/<group>/tools/*` narrows to one group, as `/mcp/<group>` does for MCP."""
        if group is None:
            return None
        known = tool_groups()
        if group not in known:
            raise MethodNotFound(f"Unknown tool group: {group}", data=f"Tool groups: {', '.join(known)}")
        return [group]


class RestToolsListView(_RestView):
    """`POST /mcp/tools/list` (the merchant seed's curl sample), `POST /mcp/<group>/tools/list`."""

    def post(self, request, group: str | None = None):
        ctx = self.context(request)
        groups = self.groups(group)
        self.arguments(request)
        return _json({"tools": [spec.describe() for spec in dispatch.list_tools(ctx, groups)]})


class RestToolsCallView(_RestView):
    """`POST /mcp/tools/call` (`/mcp/<group>/tools/call`) with `{"name", "arguments"}`; the body is the result."""

    def post(self, request, group: str | None = None):
        ctx = self.context(request)
        groups = self.groups(group)
        payload = self.arguments(request)
        result = dispatch.call_tool(ctx, payload.get("name"), payload.get("arguments"), groups)
        return _json(result.data)
