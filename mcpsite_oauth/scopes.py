"""django-oauth-toolkit's scopes: every scope of `mcpsite.core.scopes` (each tool group bare, read and write), read
from the apps at run time, so a new group or mode needs no setting."""

from __future__ import annotations

from oauth2_provider.scopes import BaseScopes

from mcpsite.core.scopes import all_scopes, tool_groups


class ToolScopes(BaseScopes):
    def get_all_scopes(self):
        return {scope: scope for scope in all_scopes()}

    def get_available_scopes(self, application=None, request=None, *args, **kwargs):
        return list(all_scopes())

    def get_default_scopes(self, application=None, request=None, *args, **kwargs):
        """A client that names no scope asks for every group in both modes, as before scopes had modes."""
        return list(tool_groups())
