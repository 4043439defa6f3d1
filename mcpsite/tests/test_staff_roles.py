"""seed_demo creates the staff groups docs/security.md describes and one demo member of each, printed like the admin."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command

from mcpsite.staff_roles import STAFF_GROUPS

pytestmark = pytest.mark.django_db


def test_seed_demo_makes_each_staff_group_and_a_member_who_can_do_that_work(monkeypatch, client):
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", "demo-admin-password-123")
    out = io.StringIO()
    call_command("seed_demo", stdout=out, stderr=io.StringIO())
    printed = out.getvalue()
    for name, perms in STAFF_GROUPS.items():
        group = Group.objects.get(name=name)
        assert {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()} == set(perms)
        member = get_user_model().objects.get(groups=group)
        assert member.is_staff and not member.is_superuser
        assert f"user: {member.username}" in printed
    users = get_user_model().objects
    assert users.get(username="cinema-staff").check_password("demo-admin-password-123")
    client.force_login(users.get(username="cinema-staff"))
    assert client.get("/admin/cinema/schedule/").status_code == 200
    assert client.get("/admin/ledger/journalentry/").status_code == 403
    client.force_login(users.get(username="auditors"))
    assert client.get("/admin/ledger/account/reports/balance-sheet/").status_code == 200
    assert client.get("/admin/ledger/journalentry/add/").status_code == 403
    # Run again: the same groups and members, no duplicates.
    call_command("seed_demo", stdout=io.StringIO(), stderr=io.StringIO())
    assert Group.objects.filter(name__in=STAFF_GROUPS).count() == len(STAFF_GROUPS)
