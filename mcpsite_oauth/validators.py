"""django-oauth-toolkit's request validator, narrowed to what MCP clients use."""

from __future__ import annotations

from urllib.parse import urlsplit

from oauth2_provider.oauth2_validators import OAuth2Validator

# Authorization code (with PKCE, always) and its refresh: tokens always act for a user who consented. Client
# credentials, password and device grants are refused even for a client registered with them.
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


def redirect_uri_acceptable(uri: str) -> bool:
    """Plain http only back to the user's own machine (RFC 8252 loopback callbacks), never to another host, where
    the code would cross the network in clear. (Which schemes at all: ALLOWED_REDIRECT_URI_SCHEMES, http and https.)"""
    parts = urlsplit(uri)
    return parts.scheme != "http" or parts.hostname in LOOPBACK_HOSTS


class McpOAuth2Validator(OAuth2Validator):
    def validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs):
        return grant_type in GRANT_TYPES and super().validate_grant_type(
            client_id, grant_type, client, request, *args, **kwargs
        )

    def validate_redirect_uri(self, client_id, redirect_uri, request, *args, **kwargs):
        return redirect_uri_acceptable(redirect_uri) and super().validate_redirect_uri(
            client_id, redirect_uri, request, *args, **kwargs
        )
