"""Staff pages: seat map, layout builder, reservation search and the recorded cancel action."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from cinema import services
from cinema.models import Reservation, Seat, Theater

pytestmark = pytest.mark.django_db


def test_schedule_page_shows_the_seat_map(admin_client, seed_world, booked):
    services.theater_set_layout(theater=seed_world["t01"], rows=10, columns=10, blocked={"J1"})
    url = f"/admin/cinema/schedule/{seed_world['s001'].pk}/change/"
    page = admin_client.get(url).content.decode()
    # Tooltips and the legend in the staff's Japanese; a reserved seat opens its reservation.
    reservation = f"/admin/cinema/reservation/{booked.pk}/change/"
    assert f'<a class="seat reserved" href="{reservation}" title="C3: 予約済（予約を開く）"' in page
    assert 'class="seat blocked" title="J1: 販売停止"' in page
    assert 'class="seat available" title="A1: 空席"' in page
    assert "予約済 2" in page and "販売停止 1" in page
    english = admin_client.get(url, headers={"Accept-Language": "en"}).content.decode()
    assert f'<a class="seat reserved" href="{reservation}" title="C3: reserved (open the reservation)"' in english
    assert 'class="seat available" title="A1: available"' in english


def test_seat_map_links_seats_only_for_staff_who_may_view_reservations(client, django_user_model, seed_world, booked):
    from django.contrib.auth.models import Permission

    clerk = django_user_model.objects.create_user("clerk", password="x" * 12, is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_schedule"))
    client.force_login(clerk)
    page = client.get(f"/admin/cinema/schedule/{seed_world['s001'].pk}/change/").content.decode()
    assert 'class="seat reserved" title="C3: 予約済"' in page and "/admin/cinema/reservation/" not in page


def test_seat_map_and_reservations_refuse_anonymous_non_staff_and_staff_without_permission(
    client, django_user_model, seed_world, booked
):
    urls = [f"/admin/cinema/schedule/{seed_world['s001'].pk}/change/", f"/admin/cinema/reservation/{booked.pk}/change/"]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response.url
    client.force_login(django_user_model.objects.create_user("customer", password="x" * 12))
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response.url
    client.force_login(django_user_model.objects.create_user("clerk", password="x" * 12, is_staff=True))
    for url in urls:
        assert client.get(url).status_code == 403


def test_reservation_page_never_shows_the_password_or_its_hash(admin_client, booked):
    for url in ("/admin/cinema/reservation/", f"/admin/cinema/reservation/{booked.pk}/change/"):
        page = admin_client.get(url).content.decode()
        assert "mypassword123" not in page and booked.password_hash not in page and "argon2" not in page


def test_schedule_list_counts_sold_seats_per_show_without_grouping_the_list(admin_client, seed_world, booked):
    services.reservation_create(schedule_id="s001", seats=["D1"], password="mypassword123", customer_name="佐藤")
    cancelled = services.reservation_create(schedule_id="s002", seats=["A1"], password="mypassword123").reservation
    services.reservation_cancel(reservation=cancelled, source="customer")
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get("/admin/cinema/schedule/")
    sold = {show.public_id: show.n_sold for show in response.context["cl"].result_list}
    assert sold == {"s001": 3, "s002": 0, "s003": 0}
    # Sold seats are a subquery per listed show, not a join grouping the list: the count and the date hierarchy
    # read the schedules alone, with no DISTINCT over their dates.
    schedule_queries = [q["sql"].upper() for q in queries if '"CINEMA_SCHEDULE"' in q["sql"].upper()]
    assert len([sql for sql in schedule_queries if "CINEMA_RESERVEDSEAT" in sql]) == 1
    assert not [sql for sql in schedule_queries if 'JOIN "CINEMA_RESERVEDSEAT"' in sql or "DISTINCT" in sql]


def test_schedule_list_opens_at_today_and_reaches_the_past(admin_client, seed_world):
    """Today's and the coming shows first; the past by its filter, the date hierarchy or a search."""
    import datetime

    from cinema.tests.conftest import make_schedule

    before = make_schedule(seed_world["m001"], seed_world["t02"], datetime.date(2026, 2, 19), "10:00", public_id="s900")
    after = make_schedule(seed_world["m001"], seed_world["t02"], datetime.date(2026, 2, 21), "10:00", public_id="s901")

    def listed(query: str = "") -> set[str]:
        response = admin_client.get(f"/admin/cinema/schedule/{query}")
        assert response.status_code == 200
        return {show.public_id for show in response.context["cl"].result_list}

    assert listed() == {"s001", "s002", "s003", after.public_id}
    assert listed("?day=today") == {"s001", "s002", "s003"}
    assert listed("?day=past") == {before.public_id}
    assert listed("?day=all") == {"s001", "s002", "s003", before.public_id, after.public_id}
    assert listed("?date__year=2026&date__month=2&date__day=19") == {before.public_id}
    assert listed("?q=s900") == {before.public_id}
    page = admin_client.get("/admin/cinema/schedule/").content.decode()
    assert "今日以降" in page and "すべての日" in page


def test_layout_builder_blocks_and_resizes(admin_client, seed_world):
    theater = seed_world["t02"]
    response = admin_client.post(
        f"/admin/cinema/theater/{theater.pk}/change/",
        {"name": "シアター2", "rows": "4", "columns": "5", "blocked_seats": ["A1", "B3", "J10"]},
    )
    assert response.status_code == 302
    assert Seat.objects.filter(theater=theater).count() == 20
    # J10 no longer exists after the shrink: its tick is dropped.
    assert set(Seat.objects.filter(theater=theater, blocked=True).values_list("label", flat=True)) == {"A1", "B3"}
    page = admin_client.get(f"/admin/cinema/theater/{theater.pk}/change/").content.decode()
    assert 'value="B3" id="id_blocked_seats_7" checked' in page


def test_layout_builder_refuses_dropping_sold_seats(admin_client, seed_world, booked):
    theater = seed_world["t01"]
    response = admin_client.post(
        f"/admin/cinema/theater/{theater.pk}/change/", {"name": "シアター1", "rows": "2", "columns": "2"}
    )
    assert response.status_code == 200
    assert "予約のある座席は配置から外せません: C3, C4" in response.content.decode()
    assert Seat.objects.filter(theater=theater).count() == 100


def test_new_theater_gets_its_seats(admin_client, db):
    response = admin_client.post("/admin/cinema/theater/add/", {"name": "シアター9", "rows": "3", "columns": "4"})
    assert response.status_code == 302
    assert Seat.objects.filter(theater__name="シアター9").count() == 12


@pytest.mark.parametrize(
    ("rows", "columns", "message"),
    [("30000", "4", "行数は 1〜26 にしてください"), ("3", "30000", "列数は 1〜99 にしてください")],
)
def test_layout_builder_refuses_an_oversized_layout_before_building_it(admin_client, db, rows, columns, message):
    response = admin_client.post("/admin/cinema/theater/add/", {"name": "巨大", "rows": rows, "columns": columns})
    assert response.status_code == 200 and message in response.content.decode()
    assert not Theater.objects.filter(name="巨大").exists()


def test_reservation_search_and_filters(admin_client, booked):
    assert booked.public_id in admin_client.get("/admin/cinema/reservation/?q=田中").content.decode()
    assert booked.public_id in admin_client.get(f"/admin/cinema/reservation/?q={booked.public_id}").content.decode()
    assert (
        booked.public_id not in admin_client.get("/admin/cinema/reservation/?status__exact=cancelled").content.decode()
    )
    page = admin_client.get("/admin/cinema/reservation/?schedule__date=2026-02-20").content.decode()
    assert booked.public_id in page
    detail = admin_client.get(f"/admin/cinema/reservation/{booked.pk}/change/").content.decode()
    assert "argon2" not in detail and booked.password_hash not in detail


def test_cancel_action_asks_first_then_calls_the_service_and_is_recorded(admin_client, admin_user, booked):
    chosen = {"action": "cancel_reservations", "_selected_action": [booked.pk]}
    page = admin_client.post("/admin/cinema/reservation/", chosen)
    # First a page that says what happens; nothing is cancelled yet.
    text = page.content.decode()
    assert page.status_code == 200 and booked.public_id in text and "C3, C4" in text
    assert "座席はすぐに販売可能に戻ります" in text and "お客様には通知されません" in text and "admin" in text
    assert Reservation.objects.get(pk=booked.pk).status == "confirmed"
    response = admin_client.post("/admin/cinema/reservation/", {**chosen, "post": "yes"}, follow=True)
    assert "1 件の予約をキャンセルしました" in response.content.decode()
    booked.refresh_from_db()
    assert (booked.status, booked.cancel_source, booked.cancelled_by) == ("cancelled", "staff", admin_user)
    entry = LogEntry.objects.get(object_id=str(booked.pk), user=admin_user)
    with translation.override("ja"):
        assert entry.get_change_message() == "状態, キャンセル日時, キャンセル経路 と キャンセルした人 を変更しました。"
    # Twice: the page says it is cancelled already; a forged confirmation gets a clear warning, nothing changes.
    again = admin_client.post("/admin/cinema/reservation/", chosen).content.decode()
    assert "キャンセル済み" in again and 'value="cancel_reservations"' in again
    again = admin_client.post("/admin/cinema/reservation/", {**chosen, "post": "yes"}, follow=True)
    assert "キャンセル済みです" in again.content.decode()
    assert Reservation.objects.get(pk=booked.pk).cancelled_by == admin_user


def test_reservations_export_quotes_full_width_formulas(admin_client, seed_world):
    from mcpsite.tests.exports import read_csv

    services.reservation_create(
        schedule_id="s001", seats=["E2"], password="mypassword123", customer_name="＝HYPERLINK(1)"
    )
    rows = read_csv(admin_client.get("/admin/cinema/reservation/export.csv"))
    assert [row[1] for row in rows[1:]] == ["'＝HYPERLINK(1)"]  # a spreadsheet normalises ＝ to = and runs it


def test_reservations_export_what_the_list_shows_as_csv(admin_client, client, django_user_model, seed_world, booked):
    from django.contrib.auth.models import Permission

    from mcpsite.tests.exports import read_csv

    other = services.reservation_create(
        schedule_id="s001", seats=["E1"], password="mypassword123", customer_name="=HYPERLINK(1)"
    ).reservation
    services.reservation_cancel(reservation=other, source=Reservation.Source.STAFF, actor=None)
    rows = read_csv(admin_client.get("/admin/cinema/reservation/export.csv"))
    assert rows[0][1] == "お客様名" and rows[0][-1] == "座席"  # headers: the fields' names, translated
    # Each header says what it is: no two alike, no bare "title" or "name".
    assert len(set(rows[0])) == len(rows[0])
    assert rows[0][:7] == ["予約番号", "お客様名", "上映回ID", "上映日", "開始時刻", "作品名", "シアター名"]
    by_id = {row[0]: row for row in rows[1:]}
    assert set(by_id) == {booked.public_id, other.public_id}
    assert by_id[booked.public_id][1] == "田中太郎" and by_id[booked.public_id][-1] == "C3 C4"
    assert by_id[other.public_id][1] == "'=HYPERLINK(1)"  # a spreadsheet must not run it
    assert by_id[other.public_id][7] != "cancelled"  # the status's label, as the list shows it
    # The list's filters apply; the changelist links to the export with them.
    confirmed = read_csv(admin_client.get("/admin/cinema/reservation/export.csv?status__exact=confirmed"))
    assert [row[0] for row in confirmed[1:]] == [booked.public_id]
    page = admin_client.get("/admin/cinema/reservation/?status__exact=confirmed").content.decode()
    assert 'href="/admin/cinema/reservation/export.csv?status__exact=confirmed"' in page
    # Permission-checked like the list.
    clerk = django_user_model.objects.create_user("clerk", password="x" * 12, is_staff=True)
    client.force_login(clerk)
    assert client.get("/admin/cinema/reservation/export.csv").status_code == 403
    clerk.user_permissions.add(Permission.objects.get(codename="view_reservation"))
    assert len(read_csv(client.get("/admin/cinema/reservation/export.csv"))) == 3
