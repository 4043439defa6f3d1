"""Staff can do only what their permissions say: secrets are not filterable, actions and deletes need their
permission, and an API key a staff member makes can do no more than they can (docs/security.md: Staff permissions)."""

import datetime
import re
from decimal import Decimal

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.test import RequestFactory

from ledger import seeding
from ledger import services as ledger_services
from ledger.models import Account, JournalEntry
from ledger.services import LineInput
from mcpsite.admin_security import secret_fields
from mcpsite.core.scopes import scope_permissions
from mcpsite.models import ApiKey
from mcpsite.services import api_key_create

pytestmark = pytest.mark.django_db

PROJECT_APPS = {"cinema", "ledger", "geo", "merchant", "reminders", "mcpsite"}
PROJECT_ADMINS = [ma for model, ma in admin.site._registry.items() if model._meta.app_label in PROJECT_APPS]
# A custom action permission and the model permission it stands for.
CUSTOM_ACTION_PERMISSIONS = {"resolve": "geo.add_pointlookup"}


@pytest.fixture
def staff(django_user_model):
    """make(*perms) -> a staff user holding exactly `perms` ("app.codename")."""

    def make(*perms, username="clerk"):
        user = django_user_model.objects.create_user(username=username, password="clerk-password-123", is_staff=True)
        for perm in perms:
            app_label, codename = perm.split(".")
            user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
        return django_user_model.objects.get(pk=user.pk)  # no stale permission cache

    return make


def view_perms():
    return [f"{ma.opts.app_label}.view_{ma.opts.model_name}" for ma in PROJECT_ADMINS]


def request_as(user):
    request = RequestFactory().get("/admin/")
    request.user = user
    return request


@pytest.fixture
def entry(db):
    """One posted entry on the seed's chart: 現金 (100) debit 500 / 売上 (400) credit 500."""
    seeding.chart_of_accounts_ensure()
    return ledger_services.journal_entry_create(
        date=datetime.date(2026, 4, 1),
        description="売上",
        lines=[
            LineInput("100", debit=Decimal(500), credit=Decimal(0)),
            LineInput("400", debit=Decimal(0), credit=Decimal(500)),
        ],
    )


def action_names(model_admin, user):
    return set(model_admin.get_actions(request_as(user))) - {"delete_selected"}


# --- item 7: secret fields are never filterable -------------------------------------------------------------


def test_every_secret_looking_field_is_declared_secret():
    """A new hash/token/digest/URL-with-credentials field must be declared in its app's `secret_fields`."""
    pattern = re.compile(r"password|hash|digest|token|secret|webhook")
    found = {
        (model._meta.label_lower, field.name)
        for model in apps.get_models()
        if model._meta.app_label in PROJECT_APPS
        for field in model._meta.concrete_fields
        if pattern.search(field.name) and not field.name.endswith("_at")  # not the time a token was rotated
    }
    declared = {(label, name) for label, names in secret_fields().items() for name in names}
    assert found and found <= declared


SECRET_LOOKUPS = [
    ("cinema", "reservation", "password_hash__gte"),
    ("mcpsite", "apikey", "digest__gte"),
    ("mcpsite", "apikey", "digest__startswith"),
    ("reminders", "profile", "webhook_url__gte"),
    ("reminders", "profile", "feed_token__gte"),
    ("reminders", "profile", "owner__password__gte"),
    ("mcpsite", "apikey", "owner__password__startswith"),
]


@pytest.mark.parametrize(("app", "model", "lookup"), SECRET_LOOKUPS)
def test_view_only_staff_cannot_filter_on_a_secret(client, staff, app, model, lookup):
    client.force_login(staff(*view_perms()))
    response = client.get(f"/admin/{app}/{model}/", {lookup: "a"})
    assert response.status_code == 400  # DisallowedModelAdminLookup: no changelist, no row, no count


def test_a_key_digest_cannot_be_binary_searched(client, staff, user):
    key, raw = api_key_create(name="someone's", owner=user, scopes=["geo"])
    client.force_login(staff("mcpsite.view_apikey"))
    for value in ["0", key.digest[:1], key.digest]:
        response = client.get("/admin/mcpsite/apikey/", {"digest__gte": value})
        assert response.status_code == 400 and key.digest not in response.content.decode()


def test_ordinary_filters_still_work(client, staff, user):
    api_key_create(name="active one", owner=user, scopes=["geo"])
    client.force_login(staff(*view_perms()))
    response = client.get("/admin/mcpsite/apikey/", {"is_active__exact": "1", "name__startswith": "active"})
    assert response.status_code == 200 and "active one" in response.content.decode()
    assert client.get("/admin/cinema/reservation/", {"status__exact": "active"}).status_code == 200


# --- item 8: every action declares its permission ------------------------------------------------------------


def test_every_action_declares_its_permission():
    for model_admin in PROJECT_ADMINS:
        for name in model_admin.actions or []:
            func = getattr(model_admin, name) if isinstance(name, str) else name
            assert getattr(func, "allowed_permissions", None), f"{model_admin}: action {name} declares no permission"


def test_view_only_staff_are_offered_no_action(staff):
    clerk = staff(*view_perms())
    for model_admin in PROJECT_ADMINS:
        assert action_names(model_admin, clerk) == set(), model_admin


@pytest.mark.parametrize("model_admin", PROJECT_ADMINS, ids=str)
def test_each_action_is_offered_to_staff_with_its_permission(staff, model_admin):
    for name in model_admin.actions or []:
        func = getattr(model_admin, name)
        perms = [
            CUSTOM_ACTION_PERMISSIONS.get(perm, f"{model_admin.opts.app_label}.{perm}_{model_admin.opts.model_name}")
            for perm in func.allowed_permissions
        ]
        holder = staff(*view_perms(), *perms, username=f"may-{name}")
        assert name in action_names(model_admin, holder)


def test_a_forged_action_post_by_view_only_staff_changes_nothing(client, staff, user, entry):
    key, _raw = api_key_create(name="k", owner=user, scopes=["geo"])
    account = Account.objects.get(code="100")
    client.force_login(staff(*view_perms()))
    for url, action, pk in [
        ("/admin/mcpsite/apikey/", "deactivate", key.pk),
        ("/admin/ledger/journalentry/", "reverse_entries", entry.pk),
        ("/admin/ledger/account/", "deactivate", account.pk),
    ]:
        client.post(url, {"action": action, "_selected_action": [pk]})
    assert ApiKey.objects.get(pk=key.pk).is_active
    assert JournalEntry.objects.count() == 1
    assert Account.objects.get(pk=account.pk).is_active


def test_staff_with_the_permission_can_run_the_action(client, staff, user):
    key, _raw = api_key_create(name="k", owner=user, scopes=["geo"])
    client.force_login(staff("mcpsite.view_apikey", "mcpsite.change_apikey"))
    client.post("/admin/mcpsite/apikey/", {"action": "deactivate", "_selected_action": [key.pk]})
    assert not ApiKey.objects.get(pk=key.pk).is_active


# --- item 9: no permission, no delete ------------------------------------------------------------------------


def test_staff_without_permissions_have_none_on_any_admin(staff):
    request = request_as(staff())
    for model_admin in PROJECT_ADMINS:
        for check in ["view", "add", "change", "delete"]:
            assert not getattr(model_admin, f"has_{check}_permission")(request), (model_admin, check)


def test_staff_without_permissions_cannot_delete_an_account(client, staff):
    account = Account.objects.create(code="9999", name="未使用", type="asset")
    client.force_login(staff())
    response = client.post(f"/admin/ledger/account/{account.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403 and Account.objects.filter(pk=account.pk).exists()


def test_staff_who_may_delete_accounts_delete_only_those_without_history(client, staff, entry):
    unused = Account.objects.create(code="9999", name="未使用", type="asset")
    client.force_login(staff("ledger.view_account", "ledger.delete_account"))
    used = Account.objects.get(code="100")
    assert client.post(f"/admin/ledger/account/{used.pk}/delete/", {"post": "yes"}).status_code == 403
    assert client.post(f"/admin/ledger/account/{unused.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Account.objects.filter(pk=unused.pk).exists() and Account.objects.filter(pk=used.pk).exists()


# --- item 10: a staff member's key is theirs, with no scope they could not use ---------------------------------


def both(*groups: str) -> list[str]:
    """The form's boxes for read and write of each group."""
    return [f"{group}:{mode}" for group in groups for mode in ("read", "write")]


def add_key(client, **data):
    return client.post("/admin/mcpsite/apikey/add/", {"name": "mine", "rate": "100/m", "is_active": "on", **data})


def test_staff_cannot_make_a_key_for_someone_else(client, staff, admin_user):
    clerk = staff("mcpsite.add_apikey", "mcpsite.view_apikey", *scope_permissions()["ledger"])
    client.force_login(clerk)
    response = add_key(client, owner=admin_user.pk, scopes=both("ledger"))
    assert response.status_code == 302 and client.get(response.url).context["raw_key"]  # its one showing
    assert ApiKey.objects.get().owner == clerk  # the posted owner is ignored


def test_staff_cannot_give_a_scope_they_could_not_use(client, staff):
    client.force_login(staff("mcpsite.add_apikey", "mcpsite.view_apikey", *scope_permissions()["ledger"]))
    response = add_key(client, scopes=both("ledger", "cinema"))
    errors = response.context["adminform"].form.errors
    assert "利用範囲 cinema は付与できません" in errors["scopes"][0]
    assert not ApiKey.objects.exists()


def test_add_apikey_alone_gives_no_scope(client, staff, admin_user):
    client.force_login(staff("mcpsite.add_apikey"))
    for scope in scope_permissions():
        response = add_key(client, owner=admin_user.pk, scopes=both(scope))
        assert response.status_code == 200 and response.context["adminform"].form.errors["scopes"]
    assert not ApiKey.objects.exists()


def test_staff_cannot_widen_or_move_an_existing_key(client, staff, admin_user):
    key, _raw = api_key_create(name="admin's", owner=admin_user, scopes=["geo", "ledger"])
    clerk = staff("mcpsite.change_apikey", "mcpsite.view_apikey", *scope_permissions()["geo"])
    client.force_login(clerk)
    url = f"/admin/mcpsite/apikey/{key.pk}/change/"
    data = {"name": "admin's", "rate": "100/m", "is_active": "on", "owner": clerk.pk}
    response = client.post(url, {**data, "scopes": both("geo", "ledger", "merchant")})
    assert "merchant" in response.context["adminform"].form.errors["scopes"][0]
    # Removing a scope it could not give, keeping one it could: allowed; the owner stays.
    assert client.post(url, {**data, "scopes": both("geo")}).status_code == 302
    key.refresh_from_db()
    assert key.scopes == ["geo"] and key.owner == admin_user


def test_superuser_may_choose_any_owner_and_scope(admin_client, django_user_model):
    other = django_user_model.objects.create_user(username="agent-user")
    response = add_key(admin_client, owner=other.pk, scopes=both(*scope_permissions()))
    assert response.status_code == 302
    key = ApiKey.objects.get()
    assert key.owner == other and sorted(key.scopes) == sorted(scope_permissions())


# --- item 12: the admin login is throttled -----------------------------------------------------------------


def sign_in(client, password, username="clerk", ip="198.51.100.7"):
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_five_wrong_passwords_lock_the_username_out_from_that_address(client, staff, settings):
    staff()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, "wrong-password").status_code == 200  # the login form again, with an error
    for _ in range(2):
        assert sign_in(client, "wrong-password").status_code == 429
    # Locked out: even the right password is refused, and no session is made.
    response = sign_in(client, "clerk-password-123")
    assert response.status_code == 429 and "_auth_user_id" not in client.session
    # The lock is per username and address: the same user elsewhere still signs in.
    assert sign_in(client, "clerk-password-123", ip="198.51.100.8").status_code == 302


def test_failed_sign_ins_never_store_the_password(client, staff):
    from axes.models import AccessAttempt

    staff()
    sign_in(client, "s3cr3t-guess")
    attempt = AccessAttempt.objects.get()
    assert attempt.username == "clerk" and "s3cr3t-guess" not in f"{attempt.post_data} {attempt.get_data}"


def test_a_correct_sign_in_resets_the_count(client, staff, settings):
    staff()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(client, "wrong-password")
    assert sign_in(client, "clerk-password-123").status_code == 302
    client.logout()
    assert sign_in(client, "wrong-password").status_code == 200
