"""API-key authentication shared by every network transport."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed

from mcpsite.core.errors import Unauthorized
from mcpsite.models import ApiKey, key_digest

from .dispatch import in_worker_thread

LAST_USED_RESOLUTION = timedelta(minutes=1)
# Where mcpsite.guard leaves the ApiKey it authenticated before reading the body (the ASGI scope is the
# server's, never the client's), so the view does not look it up a second time.
SCOPE_AUTHENTICATED_KEY = "mcpsite.authenticated_api_key"


def bearer_token(header_value: str | None) -> str | None:
    if not header_value:
        return None
    scheme, _, token = header_value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def api_key_authenticate(*, raw_key: str | None) -> ApiKey:
    """The active ApiKey for `raw_key`, or Unauthorized. Records use at most once a minute."""
    if not raw_key:
        raise Unauthorized()
    api_key = ApiKey.objects.select_related("owner").filter(digest=key_digest(raw_key), is_active=True).first()
    if api_key is None or not api_key.owner.is_active:
        raise Unauthorized()
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now
    return api_key


async def api_key_from_scope(scope) -> ApiKey | None:
    """The ApiKey of an ASGI connection's `Authorization: Bearer` header (an HTTP request or a WebSocket handshake).

    None without a header when MCP_REQUIRE_API_KEY is off; Unauthorized for a missing or invalid key otherwise.
    """
    headers = dict(scope.get("headers") or [])
    raw_key = bearer_token(headers.get(b"authorization", b"").decode("latin-1"))
    if raw_key is None and not settings.MCP_REQUIRE_API_KEY:
        return None
    return await _authenticate_in_worker(raw_key=raw_key)


_authenticate_in_worker = in_worker_thread(api_key_authenticate)


class ApiKeyAuthentication(BaseAuthentication):
    """DRF authentication: `Authorization: Bearer <key>`; `request.auth` is the ApiKey."""

    def authenticate(self, request):
        scope = getattr(request._request, "scope", None) or {}
        if scope.get(SCOPE_AUTHENTICATED_KEY) is not None:
            api_key = scope[SCOPE_AUTHENTICATED_KEY]
            return (api_key.owner, api_key)
        token = bearer_token(request.META.get("HTTP_AUTHORIZATION"))
        if token is None:
            return None
        try:
            api_key = api_key_authenticate(raw_key=token)
        except Unauthorized as exc:
            raise AuthenticationFailed(exc.message) from None
        return (api_key.owner, api_key)

    def authenticate_header(self, request):
        return 'Bearer realm="mcpsite"'
