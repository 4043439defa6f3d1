"""The fields whose values are secrets, as each app declares its own on its AppConfig (`secret_fields`): the admin
never shows or filters on them (mcpsite/admin_security.py) and the change history never records them
(mcpsite/admin_history.py)."""

from __future__ import annotations

import functools

from django.apps import apps


@functools.cache
def secret_fields() -> dict[str, frozenset[str]]:
    """{model label: names} of the fields whose values are secrets (hashes, digests, tokens, URLs with credentials),
    as each app declares its own (`AppConfig.secret_fields`). Staff never see them, and a changelist filter on them
    would give them away anyway: `?password_hash__gte=…` answers "is the hash after …", so a view-only user could
    binary-search any value one request at a time."""
    declared: dict[str, frozenset[str]] = {}
    for config in apps.get_app_configs():
        for label, names in getattr(config, "secret_fields", {}).items():
            declared[label] = declared.get(label, frozenset()) | frozenset(names)
    return declared
