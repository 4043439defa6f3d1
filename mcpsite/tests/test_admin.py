"""The API key admin shows a new key once: on the page its creation redirects to, never again."""

import pytest

from mcpsite.mcp.auth import api_key_authenticate
from mcpsite.models import ApiKey


@pytest.mark.django_db
def test_new_key_is_shown_once_after_a_redirect_and_a_reload_neither_shows_nor_makes_another(
    admin_client, admin_user, django_user_model
):
    response = admin_client.post(
        "/admin/mcpsite/apikey/add/",
        {
            "name": "voice client",
            "owner": admin_user.pk,
            "scopes": ["reminders:read", "reminders:write"],
            "rate": "100/m",
            "is_active": "on",
        },
    )
    # POST, then redirect: the page that shows the key is a GET, so a reload re-sends no form.
    assert response.status_code == 302
    key = ApiKey.objects.get()
    assert response.url.startswith(f"/admin/mcpsite/apikey/{key.pk}/created/?t=")
    # Nothing keeps the key in clear for that page: no messages cookie, nothing in the session (nor the cache:
    # test_a_held_key_is_shown_to_its_maker_once_and_stored_sealed).
    page = admin_client.get(response.url)
    raw = page.context["raw_key"]
    assert api_key_authenticate(raw_key=raw) == key
    assert f'value="{raw}"' in page.content.decode()
    assert "no-store" in page["Cache-Control"]
    for morsel in [*response.cookies.values(), *page.cookies.values()]:
        assert raw not in morsel.value
    assert raw not in str(dict(admin_client.session))
    # A reload: the key is not shown again and no second key is made.
    reloaded = admin_client.get(response.url)
    assert reloaded.status_code == 200 and reloaded.context["raw_key"] is None
    assert raw not in reloaded.content.decode() and "再表示できません" in reloaded.content.decode()
    assert ApiKey.objects.count() == 1
    # Another staff member with the link gets nothing either.
    other = django_user_model.objects.create_superuser("other", password="x" * 12)
    admin_client.force_login(other)
    assert admin_client.get(response.url).context["raw_key"] is None
    admin_client.force_login(admin_user)
    for url in ["/admin/mcpsite/apikey/", f"/admin/mcpsite/apikey/{key.pk}/change/"]:
        listing = admin_client.get(url).content.decode()
        assert key.prefix in listing and raw not in listing


def test_a_held_key_is_shown_to_its_maker_once_and_stored_sealed(db):
    from django.core.cache import cache

    from mcpsite.services import _new_key_slot, api_key_hold_for_showing, api_key_take_held

    token = api_key_hold_for_showing(raw_key="mcp_secret-key-value", user_pk=7)
    stored = cache.get(_new_key_slot(token, 7))
    assert isinstance(stored, bytes) and b"secret" not in stored
    assert api_key_take_held(token=token, user_pk=8) is None
    assert api_key_take_held(token="forged", user_pk=7) is None
    assert api_key_take_held(token=token, user_pk=7) == "mcp_secret-key-value"
    assert api_key_take_held(token=token, user_pk=7) is None


@pytest.mark.django_db
def test_an_invalid_form_creates_no_key(admin_client, admin_user):
    response = admin_client.post("/admin/mcpsite/apikey/add/", {"name": "", "owner": admin_user.pk, "rate": "100/m"})
    assert response.status_code == 200 and response.context["adminform"].form.errors
    assert not ApiKey.objects.exists()


@pytest.mark.django_db
def test_a_tool_calls_page_shows_its_error_message_in_the_staff_language(admin_client):
    from mcpsite.models import ToolCall

    call = ToolCall.objects.create(
        tool="reserve_seats",
        transport="rpc",
        outcome="error",
        error_code="409",
        error_message="Seat A3 is already reserved",
        request_id="req-1",
    )
    page = admin_client.get(f"/admin/mcpsite/toolcall/{call.pk}/change/", HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert "エラーメッセージ" in page and "Seat A3 is already reserved" in page


@pytest.mark.django_db
def test_a_dated_list_is_cut_to_a_range_of_days_in_local_time(admin_client):
    """From and to are whole days in the site's time zone, both included; a value that is not a day is the admin's
    400 page for a bad address value, never a 500."""
    import datetime

    from django.utils import timezone

    from mcpsite.models import ToolCall

    def at(day: int, hour: int) -> datetime.datetime:
        return timezone.make_aware(datetime.datetime(2026, 11, day, hour))

    for request_id, when in [("early", at(9, 23)), ("first", at(10, 0)), ("last", at(11, 23)), ("late", at(12, 0))]:
        ToolCall.objects.create(tool="t", transport="rpc", outcome="ok", request_id=request_id, created_at=when)

    def listed(query: str) -> set[str]:
        response = admin_client.get(f"/admin/mcpsite/toolcall/?{query}")
        assert response.status_code == 200
        return {call.request_id for call in response.context["cl"].result_list}

    assert listed("created_at__from=2026-11-10&created_at__to=2026-11-11") == {"first", "last"}
    assert listed("created_at__from=2026-11-11") == {"last", "late"}
    assert listed("created_at__to=2026-11-09&outcome__exact=ok") == {"early"}
    page = admin_client.get("/admin/mcpsite/toolcall/?created_at__from=2026-11-10&outcome__exact=ok").content.decode()
    assert 'name="created_at__from" value="2026-11-10"' in page
    assert 'type="hidden" name="outcome__exact" value="ok"' in page
    for junk in ("junk", "0001-01-01", "9999-12-31", "2026-02-30"):
        response = admin_client.get(f"/admin/mcpsite/toolcall/?created_at__to={junk}")
        assert response.status_code == 400, junk
