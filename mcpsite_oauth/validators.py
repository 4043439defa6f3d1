"""django-oauth-toolkit's request validator, narrowed to what MCP clients use, and made safe for concurrent and
repeated presentations of one code or refresh token."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.db import transaction
from oauth2_provider.models import get_grant_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749.errors import InvalidGrantError

from .models import RedeemedCode, token_checksum

# Authorization code (with PKCE, always) and its refresh: tokens always act for a user who consented. Client
# credentials, password and device grants are refused even for a client registered with them.
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


def redirect_uri_acceptable(uri: str) -> bool:
    """Plain http only back to the user's own machine (RFC 8252 loopback callbacks), never to another host, where
    the code would cross the network in clear. (Which schemes at all: ALLOWED_REDIRECT_URI_SCHEMES, http and https.)"""
    parts = urlsplit(uri)
    return parts.scheme != "http" or parts.hostname in LOOPBACK_HOSTS


def _revoke_tokens_of_code(code: str) -> None:
    """A code presented again after it was exchanged has leaked: revoke what it gave (RFC 6749 §4.1.2)."""
    redeemed = RedeemedCode.objects.filter(code_digest=token_checksum(code)).first()
    if redeemed is not None:
        get_refresh_token_model().revoke_family(redeemed.token_family)


class McpOAuth2Validator(OAuth2Validator):
    def validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs):
        return grant_type in GRANT_TYPES and super().validate_grant_type(
            client_id, grant_type, client, request, *args, **kwargs
        )

    def validate_redirect_uri(self, client_id, redirect_uri, request, *args, **kwargs):
        return redirect_uri_acceptable(redirect_uri) and super().validate_redirect_uri(
            client_id, redirect_uri, request, *args, **kwargs
        )

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        # The grant as read now: the checks that follow (PKCE, redirect URI) use it rather than reading it again,
        # so a concurrent exchange that consumes it meanwhile gives this one invalid_grant, not DoesNotExist.
        request.mcp_grant = get_grant_model().objects.filter(code=code, application=client).first()
        if request.mcp_grant is None or not super().validate_code(client_id, code, client, request, *args, **kwargs):
            _revoke_tokens_of_code(code)
            return False
        # A user deactivated since consenting gets no token.
        return request.user.is_active

    def get_code_challenge(self, code, request):
        return request.mcp_grant.code_challenge or None

    def get_code_challenge_method(self, code, request):
        return request.mcp_grant.code_challenge_method or None

    def confirm_redirect_uri(self, client_id, code, redirect_uri, client, request, *args, **kwargs):
        return request.mcp_grant.redirect_uri_allowed(redirect_uri)

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):
        valid = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        # A deactivated user's refresh token gives nothing (their access tokens are refused at /mcp too).
        return valid and request.user is not None and request.user.is_active

    def save_bearer_token(self, token, request, *args, **kwargs):
        """Issue the tokens only if the code or refresh token is still unused once its row is locked: of concurrent
        requests with one, the first wins and the others get `invalid_grant` (and, as for any reuse, the tokens it
        gave are revoked) instead of a half-issued answer."""
        with transaction.atomic():
            reused = self._lock_unused(request)
            if not reused:
                issued = super().save_bearer_token(token, request, *args, **kwargs)
                if request.grant_type == "authorization_code":
                    self._redeem_code(token, request)
                return issued
        # Outside the transaction, so that the revocation is not rolled back with the refusal.
        if request.grant_type == "authorization_code":
            _revoke_tokens_of_code(request.code)
        else:
            get_refresh_token_model().revoke_family(request.refresh_token_instance.token_family)
        raise InvalidGrantError(request=request)

    def _lock_unused(self, request) -> bool:
        """Lock the code or refresh token being exchanged; True when a concurrent request used it meanwhile."""
        if request.grant_type == "authorization_code":
            # The code is consumed in the transaction that issues its tokens (the toolkit deletes it only after, see
            # invalidate_authorization_code), so a concurrent exchange waits here and then finds it gone.
            grants = get_grant_model().objects.select_for_update()
            return grants.filter(code=request.code, application=request.client).first() is None
        if request.grant_type == "refresh_token":
            live = get_refresh_token_model().objects.select_for_update().filter(revoked=None)
            return live.filter(pk=request.refresh_token_instance.pk).first() is None
        return False

    def _redeem_code(self, token, request) -> None:
        get_grant_model().objects.filter(code=request.code, application=request.client).delete()
        refresh = get_refresh_token_model().objects.get(
            token_checksum=token_checksum(token["refresh_token"]), revoked=None
        )
        RedeemedCode.objects.create(
            code_digest=token_checksum(request.code), application=request.client, token_family=refresh.token_family
        )

    def invalidate_authorization_code(self, client_id, code, request, *args, **kwargs):
        # Already deleted by save_bearer_token, in the transaction that issued the tokens.
        return None
