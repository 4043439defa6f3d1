"""django-oauth-toolkit's request validator, narrowed to what MCP clients use."""

from __future__ import annotations

from oauth2_provider.oauth2_validators import OAuth2Validator

# Authorization code (with PKCE, always) and its refresh: tokens always act for a user who consented. Client
# credentials, password and device grants are refused even for a client registered with them.
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})


class McpOAuth2Validator(OAuth2Validator):
    def validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs):
        return grant_type in GRANT_TYPES and super().validate_grant_type(
            client_id, grant_type, client, request, *args, **kwargs
        )
