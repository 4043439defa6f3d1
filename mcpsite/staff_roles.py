"""The staff groups docs/security.md describes ("Staff roles"): one per kind of work, each a set of Django
permissions. `seed_demo` creates them (with one demo user each); a site gives people a group instead of
hand-picking permissions. The admin's crawl test signs in as a member of each."""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission
from django.db import transaction

_ALL = ("view", "add", "change", "delete")

STAFF_GROUPS: dict[str, tuple[str, ...]] = {
    # The box office: films, theaters, shows and their seat maps, reservations (cancel, print).
    "cinema staff": tuple(
        f"cinema.{action}_{model}" for model in ("movie", "theater", "schedule", "reservation") for action in _ALL
    ),
    # Accountants post and reverse entries and keep the chart of accounts; the reports come with viewing accounts.
    "accountants": (
        "ledger.view_account", "ledger.add_account", "ledger.change_account",
        "ledger.view_journalentry", "ledger.add_journalentry",
    ),
    # Auditors read the books only.
    "auditors": ("ledger.view_account", "ledger.view_journalentry"),
    # The shop: the catalogue, stock changes and their history.
    "shop staff": (
        "merchant.view_product", "merchant.add_product", "merchant.change_product",
        "merchant.view_inventorymovement",
    ),
    # Address lookups (the Resolve points page).
    "geo staff": ("geo.view_pointlookup", "geo.add_pointlookup", "geo.delete_pointlookup"),
    # Reminders support: people's webhooks and messages (resend), reminders on and off.
    "reminders support": (
        "reminders.view_profile", "reminders.change_profile", "reminders.view_contact", "reminders.view_event",
        "reminders.view_message", "reminders.change_message", "reminders.view_reminder", "reminders.change_reminder",
    ),
    # Keys and the audit log of tool calls.
    "platform operators": (
        "mcpsite.view_apikey", "mcpsite.add_apikey", "mcpsite.change_apikey", "mcpsite.view_toolcall",
    ),
}  # fmt: skip


def staff_groups_ensure() -> list[Group]:
    """Create or update the groups of STAFF_GROUPS with exactly their permissions."""
    groups = []
    with transaction.atomic():
        for name, perms in STAFF_GROUPS.items():
            group, _created = Group.objects.get_or_create(name=name)
            wanted = []
            for perm in perms:
                app_label, codename = perm.split(".")
                wanted.append(Permission.objects.get(content_type__app_label=app_label, codename=codename))
            group.permissions.set(wanted)
            groups.append(group)
    return groups
