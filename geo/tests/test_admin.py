"""The staff page: paste or upload coordinates, see the resolved codes, download them."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from geo.forms import parse_rows
from geo.models import PointLookup

from .fake_galuchat import expected_result

pytestmark = pytest.mark.django_db

RESOLVE = "admin:geo_pointlookup_resolve"


def test_changelist_links_to_the_resolve_page(admin_client):
    response = admin_client.get(reverse("admin:geo_pointlookup_changelist"))
    assert response.status_code == 200
    assert reverse(RESOLVE) in response.content.decode()


def test_pasted_coordinates_are_resolved_and_shown(admin_client, fake_galuchat):
    text = "lat,lon,ref\n35.68283,139.75945,東京駅\n35.6895,139.6917\n0,0,sea\n"
    response = admin_client.post(reverse(RESOLVE), {"granularity": "admin", "coordinates": text}, follow=True)
    lookup = PointLookup.objects.get()
    assert response.redirect_chain[-1][0] == reverse("admin:geo_pointlookup_change", args=[lookup.pk])
    page = response.content.decode()
    code, address = expected_result("admin", (139759, 35683))
    assert code in page and address in page and "東京駅" in page and "3 地点を判定しました" in page
    assert [r.get("ref") for r in lookup.results] == ["東京駅", None, "sea"]
    assert fake_galuchat.received[0].points == [(139759, 35683), (139692, 35690), (0, 0)]


def test_csv_upload_and_download(admin_client, fake_galuchat):
    upload = SimpleUploadedFile("points.csv", "\ufefflat,lon,ref\n35,139,a\n36,140,b\n".encode(), "text/csv")
    admin_client.post(reverse(RESOLVE), {"granularity": "jarl", "csv_file": upload})
    lookup = PointLookup.objects.get()
    assert lookup.granularity == "jarl" and lookup.point_count == 2
    download = admin_client.get(reverse("admin:geo_pointlookup_csv", args=[lookup.pk]))
    lines = download.content.decode("utf-8-sig").splitlines()
    code, address = expected_result("jarl", (140000, 36000))
    assert lines[0] == "index,ref,lat,lon,code,address"
    assert lines[2] == f"1,b,36.0,140.0,{code},{address}"


def test_csv_download_exports_formula_like_refs_as_text(admin_client, fake_galuchat):
    """A ref such as =HYPERLINK(…) must not run as a formula when staff open the CSV in a spreadsheet."""
    upload = SimpleUploadedFile("points.csv", b"35,139,=HYPERLINK(1)\n-35,139,@SUM(1)\n", "text/csv")
    admin_client.post(reverse(RESOLVE), {"granularity": "admin", "csv_file": upload})
    lookup = PointLookup.objects.get()
    rows = admin_client.get(reverse("admin:geo_pointlookup_csv", args=[lookup.pk])).content.decode("utf-8-sig")
    lines = rows.splitlines()
    assert lines[1].startswith("0,'=HYPERLINK(1),35.0,139.0,")
    assert lines[2].startswith("1,'@SUM(1),-35.0,139.0,")  # numbers keep their sign


@pytest.mark.parametrize(
    ("text", "words"),
    [("35.0;139.0", "lat,lon[,ref] の形式"), ("north,139", "が数値ではありません"), ("", "座標を貼り付ける")],
)
def test_badly_formatted_text_is_a_form_error(admin_client, fake_galuchat, text, words):
    response = admin_client.post(reverse(RESOLVE), {"granularity": "admin", "coordinates": text})
    assert response.status_code == 200 and words in response.content.decode()
    assert not PointLookup.objects.exists()


def test_out_of_range_point_is_reported_like_the_tool(admin_client, fake_galuchat):
    response = admin_client.post(reverse(RESOLVE), {"granularity": "admin", "coordinates": "1,2,a\n95,139,b"})
    page = response.content.decode()
    assert "points[1].lat=95.0 is outside -90..90" in page and "ref &quot;b&quot;" in page
    assert not PointLookup.objects.exists() and fake_galuchat.received == []


def test_upstream_error_is_shown_and_saved(admin_client, fake_galuchat):
    fake_galuchat.status = 429
    response = admin_client.post(reverse(RESOLVE), {"granularity": "admin", "coordinates": "35,139"}, follow=True)
    assert "RATE_LIMIT" in response.content.decode()
    assert PointLookup.objects.get().error["code"] == "RATE_LIMIT"


def test_resolve_again_action(admin_client, fake_galuchat, settings):
    settings.GALUCHAT_CACHE_TTL = 0
    fake_galuchat.status, fake_galuchat.fail_on_call = 500, 1
    admin_client.post(reverse(RESOLVE), {"granularity": "admin", "coordinates": "35,139"})
    lookup = PointLookup.objects.get()
    admin_client.post(
        reverse("admin:geo_pointlookup_changelist"), {"action": "resolve_again", "_selected_action": [lookup.pk]}
    )
    lookup.refresh_from_db()
    assert lookup.error is None and lookup.results[0]["code"] == expected_result("admin", (139000, 35000))[0]


def test_staff_without_permission_cannot_resolve(client, django_user_model):
    staff = django_user_model.objects.create_user("viewer", password="x" * 12, is_staff=True)
    client.force_login(staff)
    assert client.get(reverse(RESOLVE)).status_code == 403


def test_resolve_and_csv_pages_refuse_anonymous_and_non_staff(client, django_user_model, admin_client, fake_galuchat):
    admin_client.post(reverse(RESOLVE), {"granularity": "admin", "coordinates": "35,139,a"})
    csv_url = reverse("admin:geo_pointlookup_csv", args=[PointLookup.objects.get().pk])
    for url in (reverse(RESOLVE), csv_url):
        assert client.get(url).status_code == 302  # anonymous: to the login page
    user = django_user_model.objects.create_user("customer", password="x" * 12)  # not staff
    client.force_login(user)
    for url in (reverse(RESOLVE), csv_url):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response.url
    assert client.post(reverse(RESOLVE), {"granularity": "admin", "coordinates": "35,139"}).status_code == 302
    assert PointLookup.objects.count() == 1
    staff = django_user_model.objects.create_user("staffer", password="x" * 12, is_staff=True)
    client.force_login(staff)
    assert client.get(csv_url).status_code == 403  # staff without the view permission


def test_parse_rows_skips_comments_and_blank_lines():
    assert parse_rows([["# note"], [], ["1", "2"], [" 3 ", " 4 ", " r "]]) == [
        {"lat": 1.0, "lon": 2.0},
        {"ref": "r", "lat": 3.0, "lon": 4.0},
    ]
