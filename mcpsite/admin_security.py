"""What staff may do in the admin beyond Django's per-model permissions: secret fields are never filterable,
and an API key a staff member creates can do no more than they can.

Every ModelAdmin of the project derives from `StaffModelAdmin`; docs/security.md ("Staff permissions") documents
the rules.
"""

from __future__ import annotations

import functools

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models.constants import LOOKUP_SEP

from .admin_history import with_values
from .core.scopes import scope_permissions
from .core.secret_fields import secret_fields


@functools.cache
def _secret_field_names() -> frozenset[str]:
    return frozenset().union(*secret_fields().values())


def lookup_touches_secret(lookup: str) -> bool:
    """Refused wherever a secret's name appears in a lookup path, so a relation (`owner__password__gte`) cannot
    reach it either."""
    return not _secret_field_names().isdisjoint(lookup.split(LOOKUP_SEP))


def grantable_scopes(user) -> set[str]:
    """The scopes `user` may give an API key (all of them for a superuser).

    Each app declares the permissions its scope needs (AppConfig.mcp_scope_permissions): what that group's tools do,
    said in the admin's terms. A key acts as its owner, so a scope the creator could not use in the admin would widen
    their rights."""
    return {scope for scope, perms in scope_permissions().items() if user.has_perms(perms)}


class StaffModelAdmin(admin.ModelAdmin):
    """The project's ModelAdmin: no changelist lookup on a secret field, whatever the user's permissions; a history
    that keeps each change's before and after."""

    def get_changeform_initial_data(self, request):
        """The add form's values from its address (`?movie=3&date=…`), each as its form field reads it, and only if
        the field accepts it: a value it does not (`?movie=junk`, a date out of range) is left out instead of
        breaking the page."""
        initial = super().get_changeform_initial_data(request)
        fields = self.get_form(request).base_fields
        kept = {}
        for name, value in initial.items():
            field = fields.get(name)
            try:
                kept[name] = value if field is None else field.clean(value)
            except (ValidationError, ValueError, OverflowError, TypeError):
                continue
        return kept

    def construct_change_message(self, request, form, formsets, add=False):
        """Django's history message, with each changed field's before and after (mcpsite/admin_history.py)."""
        return with_values(super().construct_change_message(request, form, formsets, add), form=form, formsets=formsets)

    def lookup_allowed(self, lookup, value, request):
        if lookup_touches_secret(lookup):
            return False  # the changelist answers 400 (DisallowedModelAdminLookup) and shows nothing
        return super().lookup_allowed(lookup, value, request)


class ReadOnlyModelAdmin(StaffModelAdmin):
    """A record the site writes by itself (stock movements, reminder deliveries): listed, never added, edited or
    deleted by hand."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
