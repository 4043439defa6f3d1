"""A show's seat holders: every seat a reservation holds or held, searchable (kana-folded as product search), on a
page linked from the show's; never a password or its hash."""

from __future__ import annotations

import pytest

from cinema import selectors, services
from cinema.models import Reservation

pytestmark = pytest.mark.django_db


@pytest.fixture
def holders_world(seed_world, booked):
    """田中太郎 holds C3 C4 (booked); デモ顧客 holds A1; 山田花子 held A2 (cancelled)."""
    services.reservation_create(schedule_id="s001", seats=["A1"], password="mypassword123", customer_name="デモ顧客")
    gone = services.reservation_create(
        schedule_id="s001", seats=["A2"], password="mypassword123", customer_name="山田花子"
    ).reservation
    services.reservation_cancel(reservation=gone, source=Reservation.Source.STAFF)
    return seed_world


def _seats(holders) -> list[tuple[str, str, str]]:
    return [(h.seat_id, h.customer_name, h.status) for h in holders]


def test_every_seat_held_or_once_held_by_seat(holders_world):
    holders = selectors.show_seat_holders(schedule=holders_world["s001"])
    assert _seats(holders) == [
        ("A1", "デモ顧客", "confirmed"),
        ("A2", "山田花子", "cancelled"),
        ("C3", "田中太郎", "confirmed"),
        ("C4", "田中太郎", "confirmed"),
    ]


@pytest.mark.parametrize(
    ("query", "seats"),
    [
        ("ﾃﾞﾓ", ["A1"]),  # half-width katakana
        ("でも", ["A1"]),  # hiragana
        ("デモ　顧客", ["A1"]),  # full-width space: two words, both held
        ("田中", ["C3", "C4"]),
        ("c3", ["C3"]),
        ("Ｃ４", ["C4"]),
        ("r20260220002", ["A1"]),
        ("山田 キャンセル", []),
        ("", ["A1", "A2", "C3", "C4"]),
    ],
)
def test_search_folds_as_product_search(holders_world, query, seats):
    found = selectors.show_seat_holders(schedule=holders_world["s001"], query=query)
    assert [h.seat_id for h in found] == seats


def test_the_page_lists_and_searches_without_secrets(admin_client, holders_world):
    s001 = holders_world["s001"]
    change = admin_client.get(f"/admin/cinema/schedule/{s001.pk}/change/").content.decode()
    assert f'href="/admin/cinema/schedule/{s001.pk}/holders/"' in change
    page = admin_client.get(f"/admin/cinema/schedule/{s001.pk}/holders/").content.decode()
    assert "デモ顧客" in page and "山田花子" in page and "キャンセル" in page  # the status, in the page's language
    assert "argon2" not in page and "mypassword123" not in page
    found = admin_client.get(f"/admin/cinema/schedule/{s001.pk}/holders/", {"q": "ﾃﾞﾓ"}).content.decode()
    assert "デモ顧客" in found and "田中太郎" not in found
    none = admin_client.get(f"/admin/cinema/schedule/{s001.pk}/holders/", {"q": "x" * 5000}).content.decode()
    assert "一致する" in none


def test_the_page_needs_the_reservations_view_permission(client, django_user_model, holders_world):
    from django.contrib.auth.models import Permission

    clerk = django_user_model.objects.create_user("clerk", password="x" * 12, is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_schedule"))
    client.force_login(clerk)
    url = f"/admin/cinema/schedule/{holders_world['s001'].pk}/holders/"
    assert client.get(url).status_code == 403
    change = client.get(f"/admin/cinema/schedule/{holders_world['s001'].pk}/change/").content.decode()
    assert url not in change  # no link to a page it may not open
    clerk.user_permissions.add(Permission.objects.get(codename="view_reservation"))
    client.force_login(django_user_model.objects.get(pk=clerk.pk))
    assert client.get(url).status_code == 200
