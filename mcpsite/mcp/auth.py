"""API-key authentication shared by every network transport, and the hook for other bearer tokens (OAuth)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save
from django.utils import timezone
from django.utils.module_loading import import_string
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed

from mcpsite.core.errors import InvalidAccessToken, MissingCredentials, ScopeDenied, Unauthorized
from mcpsite.models import KEY_PREFIX, ApiKey, key_digest

from .refusals import DEFAULT_CHALLENGE
from .threads import in_worker_thread

LAST_USED_RESOLUTION = timedelta(minutes=1)
# Where the ingress (mcpsite.guard) leaves the principal it authenticated before reading the body (the ASGI scope is
# the server's, never the client's): an ApiKey, an OAuth grant, or None where no key is required.
SCOPE_PRINCIPAL = "mcpsite.principal"


def bearer_token(header_value: str | None) -> str | None:
    if not header_value:
        return None
    scheme, _, token = header_value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def api_key_authenticate(*, raw_key: str | None, url: str | None = None) -> ApiKey:
    """The active ApiKey for `raw_key`, or Unauthorized. Records use at most once a minute.

    A bearer token that is no API key goes to settings.MCP_TOKEN_AUTHENTICATORS (OAuth access tokens) when the
    request's `url` is known (tokens are bound to a resource); what they return acts like an ApiKey (owner, scopes,
    rate, allows(), audit_fields()).
    """
    if not raw_key:
        raise MissingCredentials()
    api_key = ApiKey.objects.select_related("owner").filter(digest=key_digest(raw_key), is_active=True).first()
    if api_key is None and url is not None:
        for authenticator in settings.MCP_TOKEN_AUTHENTICATORS:
            if (principal := import_string(authenticator)(raw_token=raw_key, url=url)) is not None:
                return principal
        if not raw_key.startswith(KEY_PREFIX) and settings.MCP_TOKEN_AUTHENTICATORS:
            raise InvalidAccessToken()  # not shaped like an API key: the refusal names what was sent
    if api_key is None or not api_key.owner.is_active:
        raise Unauthorized()
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now
    return api_key


class RecentKeys:
    """The keys this process's transports authenticated in the last MCP_API_KEY_CACHE_SECONDS, by digest.

    A hit costs no query and no hop to a worker thread. A key revoked,
    deactivated or narrowed by another process (or by a queryset `update`, which sends no signal) keeps working here
    for at most MCP_API_KEY_CACHE_SECONDS; a key or user saved or deleted through the ORM in this process (the
    admin's change form, `key.save()`, deleting the owner) is forgotten at once — that key, or that user's keys, not
    the others (a staff login saves its user). Only successes are kept, so a new key works at once and an unknown
    one is looked up every time.
    """

    MAX_KEYS = 10_000

    def __init__(self) -> None:
        self._keys: dict[str, tuple[ApiKey, float]] = {}
        self._lock = threading.Lock()
        self.clock = time.monotonic

    def get(self, digest: str) -> ApiKey | None:
        found = self._keys.get(digest)
        if found is None or self.clock() - found[1] >= settings.MCP_API_KEY_CACHE_SECONDS:
            return None
        return found[0]

    def put(self, api_key: ApiKey) -> None:
        with self._lock:
            if len(self._keys) >= self.MAX_KEYS:
                self._keys.clear()
            self._keys[api_key.digest] = (api_key, self.clock())

    def forget(self, instance, **_signal) -> None:
        """Drop the saved or deleted ApiKey, or every key of the saved or deleted user."""
        by_key = isinstance(instance, ApiKey)
        with self._lock:
            for digest, (api_key, _) in list(self._keys.items()):
                if (api_key.pk if by_key else api_key.owner_id) == instance.pk:
                    del self._keys[digest]

    def clear(self) -> None:
        with self._lock:
            self._keys.clear()


recent_keys = RecentKeys()
for _model in (ApiKey, get_user_model()):
    post_save.connect(recent_keys.forget, sender=_model, dispatch_uid=f"recent_keys_save_{_model._meta.label}")
    post_delete.connect(recent_keys.forget, sender=_model, dispatch_uid=f"recent_keys_delete_{_model._meta.label}")


async def api_key_from_scope(scope) -> ApiKey | None:
    """The ApiKey of an ASGI connection's `Authorization: Bearer` header (an HTTP request or a WebSocket handshake).

    None without a header when MCP_REQUIRE_API_KEY is off; Unauthorized for a missing or invalid key otherwise.
    A key seen in the last MCP_API_KEY_CACHE_SECONDS is answered from `recent_keys`, without a query.
    """
    headers = dict(scope.get("headers") or [])
    raw_key = bearer_token(headers.get(b"authorization", b"").decode("latin-1"))
    if raw_key is None and not settings.MCP_REQUIRE_API_KEY:
        return None
    if raw_key and (api_key := recent_keys.get(key_digest(raw_key))) is not None:
        return api_key
    principal = await _authenticate_in_worker(raw_key=raw_key, url=request_url(scope))
    # Only API keys are kept: an OAuth token revoked or expired must stop working on the next request.
    if isinstance(principal, ApiKey):
        recent_keys.put(principal)
    return principal


def site_origin(scope) -> str:
    """This site as clients reach it: OAUTH_ISSUER_URL in production (behind a proxy the ASGI scope has the
    proxy's view), else the request's own scheme and Host."""
    if settings.OAUTH_ISSUER_URL:
        return settings.OAUTH_ISSUER_URL
    headers = dict(scope.get("headers") or [])
    scheme = {"ws": "http", "wss": "https"}.get(scope.get("scheme"), scope.get("scheme") or "http")
    return f"{scheme}://{headers.get(b'host', b'').decode('latin-1')}"


def request_url(scope) -> str:
    return site_origin(scope) + scope.get("path", "")


def bearer_challenge(scope, error, groups: list[str] | None) -> bytes:
    """The `WWW-Authenticate` of a refused MCP request (RFC 6750 §3, RFC 9728 §5.1): where the protected resource
    metadata is, the scope needed (the refused call's, else the endpoint's groups), and `invalid_token` when a token
    was sent but is not good here."""
    parts = []
    if isinstance(error, ScopeDenied) and error.scope:
        groups = [error.scope]
    if isinstance(error, ScopeDenied):
        parts.append('error="insufficient_scope"')
    elif bearer_token(dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")):
        parts.append('error="invalid_token"')
    if groups:
        parts.append(f'scope="{" ".join(groups)}"')
    parts.append(f'resource_metadata="{site_origin(scope)}/.well-known/oauth-protected-resource/mcp"')
    return ("Bearer " + ", ".join(parts)).encode("latin-1")


def endpoint_scope_denied(principal, groups: list[str] | None) -> ScopeDenied | None:
    """An OAuth token at `/mcp/<group>` without that group's scope is refused with 403 insufficient_scope, so its
    client can ask the user for it (MCP step-up). API keys keep their behaviour: the group's tools are hidden."""
    if getattr(principal, "kind", "api_key") != "oauth" or not groups:
        return None
    missing = [group for group in groups if not principal.allows(group)]
    return ScopeDenied(f"This token may not use {', '.join(missing)} tools") if missing else None


_authenticate_in_worker = in_worker_thread(api_key_authenticate)


class IngressAuthentication(BaseAuthentication):
    """DRF authentication for the seed endpoints: the principal the ingress (mcpsite.guard) authenticated, from the
    request; `request.auth` is it. A request served without the ingress (a WSGI server, Django's test client) is
    authenticated here by the same rules."""

    def authenticate(self, request):
        if SCOPE_PRINCIPAL in request.META:
            principal = request.META[SCOPE_PRINCIPAL]
            return None if principal is None else (principal.owner, principal)
        token = bearer_token(request.META.get("HTTP_AUTHORIZATION"))
        if token is None:
            return None
        try:
            api_key = api_key_authenticate(raw_key=token)
        except Unauthorized as exc:
            raise AuthenticationFailed(exc.message) from None
        return (api_key.owner, api_key)

    def authenticate_header(self, request):
        return DEFAULT_CHALLENGE.decode()
