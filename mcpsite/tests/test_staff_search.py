"""The staff's one search box (mcpsite/staff_search.py): reservations, journal entries, products and API keys,
kana-folded, grouped by kind, bounded, only what the staff member's role may view, never by or showing a secret."""

from __future__ import annotations

import datetime
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from cinema import services as cinema_services
from cinema.models import Reservation
from cinema.tests.conftest import make_movie, make_schedule, make_theater
from ledger import seeding
from ledger import services as ledger_services
from ledger.models import JournalEntry
from ledger.services import LineInput
from mcpsite.core.migrations import fold_rows
from mcpsite.core.text import search_key
from mcpsite.models import ApiKey
from mcpsite.services import api_key_create
from mcpsite.staff_search import PER_KIND
from mcpsite.tests.test_admin_crawl import staff_per_role
from merchant.models import Product

pytestmark = pytest.mark.django_db

URL = reverse("staff-search")


BOOKINGS = PER_KIND + 2  # デモ顧客's: more than one page of hits


@pytest.fixture
def world(django_user_model):
    return staff_search_world(django_user_model)


def staff_search_world(django_user_model) -> dict:
    """Reservations of デモ顧客 and one of 田中太郎 for a show tomorrow, an entry, a product and a key with katakana
    names, and one staff member per role (`mcpsite.staff_roles`)."""
    theater, movie = make_theater("シアター1", rows=4, columns=5), make_movie("スタームービー")
    show = make_schedule(movie, theater, timezone.localdate() + datetime.timedelta(days=1), "18:00")
    for n in range(BOOKINGS):
        Reservation.objects.create(
            public_id=f"r20260101{n:03d}", schedule=show, customer_name="デモ顧客", password_hash="-",
            reserved_at=timezone.now(),
        )  # fmt: skip
    # The booking service (one raw statement on PostgreSQL) writes the key too.
    cinema_services.reservation_create(
        schedule_id=show.public_id, seats=["A1"], password="mypassword123", customer_name="田中太郎"
    )
    seeding.chart_of_accounts_ensure()
    ledger_services.journal_entry_create(
        date=datetime.date(2026, 11, 2),
        description="ガス代 十一月分",
        lines=[LineInput("400", credit=Decimal(3300)), LineInput("100", debit=Decimal(3300))],
    )
    Product.objects.create(sku="KATA-1", name="ムギボーカレンダー", price_cents=198000, inventory_count=3)
    admin = django_user_model.objects.create_superuser("admin", password="x" * 12)
    api_key_create(name="テスト用キー", owner=admin, scopes=["cinema"])
    return staff_per_role(django_user_model, superuser=admin, prefix="search")


def search(client, user, q: str):
    client.force_login(user)
    response = client.get(URL, {"q": q})
    assert response.status_code == 200
    return response


def kinds(response) -> dict[str, list[str]]:
    """{model label: the titles found}."""
    return {group.model: [link.hit.title for link in group.hits] for group in response.context["groups"]}


@pytest.mark.parametrize("typed", ["ﾃﾞﾓ", "でも", "デモ", "ﾃﾞﾓ顧客", "デモ　顧客"])
def test_reservations_are_found_by_the_customer_name_however_its_kana_are_typed(client, world, typed):
    found = kinds(search(client, world["superuser"], typed))["cinema.reservation"]
    assert found and all("デモ顧客" in title for title in found)


def test_reservation_number_finds_it_and_its_start_finds_the_days_bookings(client, world):
    reservation = Reservation.objects.get(customer_name="田中太郎")
    response = search(client, world["superuser"], reservation.public_id.upper())
    [link] = response.context["groups"][0].hits
    assert link.href == reverse("admin:cinema_reservation_change", args=[reservation.pk])
    day = reservation.public_id[:9]  # r + YYYYMMDD
    titles = kinds(search(client, world["superuser"], day))["cinema.reservation"]
    expected = Reservation.objects.filter(public_id__startswith=day).count()
    assert len(titles) == min(expected, PER_KIND) and all(t.startswith(day) for t in titles)


@pytest.mark.parametrize(
    ("typed", "kind", "title"),
    [
        ("ｶﾞｽ代", "ledger.journalentry", "ガス代 十一月分"),
        ("がす", "ledger.journalentry", "ガス代 十一月分"),
        ("むぎぼ かれんだ", "merchant.product", "ムギボーカレンダー"),
        ("kata-1", "merchant.product", "ムギボーカレンダー"),
        ("てすと", "mcpsite.apikey", "テスト用キー"),
    ],
)
def test_each_kind_is_found_folded_and_links_to_its_change_page(client, world, typed, kind, title):
    response = search(client, world["superuser"], typed)
    assert title in kinds(response)[kind]
    link = next(
        link for g in response.context["groups"] if g.model == kind for link in g.hits if link.hit.title == title
    )
    assert client.get(link.href).status_code == 200
    assert f'href="{link.href}"' in response.content.decode()


def test_an_entry_is_found_by_its_id(client, world):
    entry = JournalEntry.objects.order_by("date").first()
    assert kinds(search(client, world["superuser"], str(entry.pk)))["ledger.journalentry"] == [entry.description]


def test_an_api_key_is_found_by_its_prefix_never_by_the_key_or_its_digest(client, world):
    key, raw_key = api_key_create(name="prefix probe", owner=world["superuser"], scopes=["ledger"])
    assert kinds(search(client, world["superuser"], key.prefix))["mcpsite.apikey"] == ["prefix probe"]
    for secret in (raw_key, key.digest, key.digest[:12]):
        assert kinds(search(client, world["superuser"], secret))["mcpsite.apikey"] == []
    for shown in (key.prefix, "prefix", raw_key):
        assert key.digest not in search(client, world["superuser"], shown).content.decode()


def test_a_reservation_is_never_found_by_its_password_hash_and_none_is_shown(client, world):
    reservation = Reservation.objects.get(customer_name="田中太郎")
    fragment = reservation.password_hash.split("$")[-1][:16]
    response = search(client, world["superuser"], fragment)
    assert not any(kinds(response).values())
    assert reservation.password_hash not in search(client, world["superuser"], "デモ").content.decode()


@pytest.mark.parametrize(
    ("role", "visible"),
    [
        ("superuser", {"cinema.reservation", "ledger.journalentry", "merchant.product", "mcpsite.apikey"}),
        ("cinema staff", {"cinema.reservation"}),
        ("accountants", {"ledger.journalentry"}),
        ("auditors", {"ledger.journalentry"}),
        ("shop staff", {"merchant.product"}),
        ("platform operators", {"mcpsite.apikey"}),
        ("geo staff", set()),
        ("nobody", set()),
    ],
)
def test_only_the_kinds_the_role_may_view_are_searched(client, world, role, visible):
    response = search(client, world[role], "デモ")
    assert set(kinds(response)) == visible
    if not visible:
        assert "この検索の対象となる一覧をどれも閲覧できません" in response.content.decode()  # in the staff's language


def test_results_are_bounded_per_kind_and_the_rest_is_in_the_list_searched_alike(client, world):
    many = Reservation.objects.filter(customer_name="デモ顧客")
    assert many.count() == BOOKINGS > PER_KIND
    [group] = [g for g in search(client, world["superuser"], "ﾃﾞﾓ").context["groups"] if g.model == "cinema.reservation"]
    assert len(group.hits) == PER_KIND and group.more
    listed = client.get(group.changelist)
    assert listed.context["cl"].result_count == many.count()  # the changelist folds the search too


def test_queries_do_not_grow_with_the_hits(client, world):
    client.force_login(world["superuser"])
    client.get(URL, {"q": "zzz-nothing"})  # warm caches (content types, permissions, session)
    with CaptureQueriesContext(connection) as none:
        client.get(URL, {"q": "zzz-nothing"})
    with CaptureQueriesContext(connection) as many:
        client.get(URL, {"q": "ﾃﾞﾓ"})
    assert len(many) == len(none)


def test_the_box_is_in_the_header_of_admin_pages_and_not_on_the_login_page(client, world):
    assert 'id="staff-search-header"' not in client.get(reverse("admin:login")).content.decode()
    client.force_login(world["auditors"])
    for url in (reverse("admin:index"), reverse("admin:ledger_journalentry_changelist"), URL):
        assert 'id="staff-search-header"' in client.get(url).content.decode()


def test_an_empty_or_overlong_query_is_a_page_not_an_error(client, world):
    assert not any(kinds(search(client, world["superuser"], "   ")).values())
    assert search(client, world["superuser"], "デ" * 5000).status_code == 200
    assert search(client, world["superuser"], "\x00%_").status_code == 200


def test_every_writer_stores_the_folded_keys(world):
    """The raw bulk insert of entries, the booking (raw SQL on PostgreSQL), and save() all write the keys."""
    assert seeding.scale_entries_ensure(3) == 3  # the bulk load (ledger.sql.journal_rows_insert)
    for description, key in JournalEntry.objects.values_list("description", "search_key"):
        assert key == search_key(description)
    assert JournalEntry.objects.get(description="ガス代 十一月分").search_key == "がす代 十一月分"
    assert dict(Reservation.objects.values_list("customer_name", "customer_key")) == {
        "デモ顧客": "でも顧客",
        "田中太郎": "田中太郎",
    }
    key = ApiKey.objects.get(name="テスト用キー")
    key.name = "ﾆｭｰ"
    key.save(update_fields=["name"])
    key.refresh_from_db()
    assert key.name_key == "にゅ"


def test_the_migration_fills_the_keys_of_existing_rows(world):
    Reservation.objects.update(customer_key="")
    ApiKey.objects.update(name_key="")
    editor = SimpleNamespace(connection=connection)
    fold_rows("cinema.Reservation", "customer_name", "customer_key", search_key).code(apps, editor)
    fold_rows("mcpsite.ApiKey", "name", "name_key", search_key).code(apps, editor)
    assert set(Reservation.objects.values_list("customer_key", flat=True)) == {"でも顧客", "田中太郎"}
    assert "てすと用き" in set(ApiKey.objects.values_list("name_key", flat=True))
