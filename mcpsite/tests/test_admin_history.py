"""A staff edit's history keeps each changed field's before and after and who made it (mcpsite/admin_history.py),
and the History page shows them in the reader's language; a secret field is named, never its values."""

from __future__ import annotations

import datetime
import json

import pytest
from django import forms
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.utils import translation

from cinema import services
from cinema.tests.conftest import make_movie, make_schedule, make_theater
from mcpsite.admin_history import field_changes, field_values
from mcpsite.tests.docs_images import screenshot_in_both_languages

pytestmark = pytest.mark.django_db


def _last_values(obj) -> list[dict]:
    entry = LogEntry.objects.filter(object_id=str(obj.pk)).latest("action_time")
    return json.loads(entry.change_message)[0]["changed"]["values"]


def _movie_form(movie, **changes) -> dict:
    data = {
        "title": movie.title, "genre": movie.genre, "duration": str(movie.duration), "rating": str(movie.rating),
        "description": movie.description, "release_date": movie.release_date.isoformat(),
    }  # fmt: skip
    return {**data, **changes}


def test_an_edit_keeps_each_fields_before_and_after(admin_client):
    movie = make_movie("スタームービー", "4.5")
    response = admin_client.post(
        f"/admin/cinema/movie/{movie.pk}/change/", _movie_form(movie, title="スタームービー2", rating="4.8")
    )
    assert response.status_code == 302
    assert _last_values(movie) == [
        {"field": "title", "before": "スタームービー", "after": "スタームービー2"},
        {"field": "rating", "before": "4.5", "after": "4.8"},
    ]
    page = admin_client.get(f"/admin/cinema/movie/{movie.pk}/history/").content.decode()
    assert "タイトル" in page and "スタームービー2" in page and "4.5" in page and "4.8" in page
    assert ">admin<" in page or "admin (" in page or "admin</td>" in page  # who made it


def test_a_shows_theater_is_named_and_its_blocked_seats_listed(admin_client):
    day = datetime.date.today() + datetime.timedelta(days=3)
    first, second = make_theater("シアター1", rows=2, columns=3), make_theater("シアター2", rows=2, columns=3)
    show = make_schedule(make_movie(), first, day, "10:00", "12:00")
    form = {
        "movie": str(show.movie_id), "theater": str(first.pk), "date": day.isoformat(),
        "start_time": "10:00", "end_time": "12:00",
    }  # fmt: skip
    url = f"/admin/cinema/schedule/{show.pk}/change/"
    assert admin_client.post(url, {**form, "blocked_seats": ["A2", "B1"]}).status_code == 302
    assert _last_values(show) == [{"field": "Seats blocked for this show", "before": "", "after": "A2, B1"}]
    services.show_seat_blocks_set(schedule=show, seats=[])
    assert admin_client.post(url, {**form, "theater": str(second.pk), "start_time": "13:00"}).status_code == 302
    assert _last_values(show) == [
        {"field": "theater", "before": "シアター1", "after": "シアター2"},
        {"field": "start time", "before": "10:00", "after": "13:00"},
    ]


class _Form(forms.Form):
    done = forms.BooleanField(required=False)
    kind = forms.ChoiceField(choices=[("asset", "Asset"), ("expense", "Expense")])
    pin = forms.CharField(widget=forms.PasswordInput, required=False)


def test_choices_and_yes_no_are_shown_in_the_readers_language_and_a_password_never():
    form = _Form(data={"done": "on", "kind": "expense", "pin": "1234"}, initial={"done": False, "kind": "asset"})
    assert form.is_valid()
    values = field_values(form)
    assert {"field": "pin", "secret": True} in values and "1234" not in json.dumps(values)
    entry = LogEntry(change_message=json.dumps([{"changed": {"fields": ["done"], "values": values}}]))
    with translation.override("ja"):
        shown = {c.field: (c.before, c.after, c.secret) for c in field_changes(entry)}
    assert shown["Done"] == ("いいえ", "はい", False)  # a plain form's labels are as written
    assert shown["Pin"] == ("", "", True)


def test_a_declared_secret_field_is_named_without_its_values():
    class UserForm(forms.ModelForm):
        class Meta:
            model = User
            fields = ["username", "password"]

    user = User.objects.create(username="clerk", password="argon2$old-hash")
    form = UserForm(data={"username": "clerk2", "password": "argon2$new-hash"}, instance=user)
    assert form.is_valid()
    values = field_values(form)
    assert values == [
        {"field": "username", "before": "clerk", "after": "clerk2"},
        {"field": "password", "secret": True},
    ]


def test_an_inline_forms_change_keeps_its_values_too():
    from django.contrib.admin.utils import construct_change_message

    from cinema.models import Movie
    from mcpsite.admin_history import with_values

    first, second = make_movie("スターA"), make_movie("スターB")
    formset = forms.modelformset_factory(Movie, fields=["title"], extra=0)(
        {
            "form-TOTAL_FORMS": "2", "form-INITIAL_FORMS": "2",
            "form-0-id": str(first.pk), "form-0-title": "スターA",
            "form-1-id": str(second.pk), "form-1-title": "スターB2",
        },
        queryset=Movie.objects.order_by("pk"),
    )  # fmt: skip
    assert formset.is_valid()
    formset.save()
    parent = _Form(data={"kind": "asset"}, initial={"done": False, "kind": "asset"})
    assert parent.is_valid() and not parent.has_changed()
    message = with_values(construct_change_message(parent, [formset], False), form=parent, formsets=[formset])
    assert message == [
        {
            "changed": {
                "name": "movie",
                "object": str(Movie.objects.get(pk=second.pk)),
                "fields": ["title"],
                "values": [{"field": "title", "before": "スターB", "after": "スターB2"}],
            }
        }
    ]


def test_entries_without_values_show_as_before(admin_client):
    """Additions, actions' notes and entries written before values were kept: Django's sentence only."""
    for message in ["", "Cancelled by staff", '[{"added": {}}]', '[{"changed": {"fields": ["title"]}}]', "[oops"]:
        assert field_changes(LogEntry(change_message=message)) == []


@pytest.mark.django_db(transaction=True)
def test_the_history_page_shows_before_and_after_in_chromium(admin_login, live_server):
    movie = make_movie("スタームービー", "4.5")
    page = admin_login()
    page.goto(f"{live_server.url}/admin/cinema/movie/{movie.pk}/change/")
    page.fill("#id_title", "スタームービー 完全版")
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist")
    page.click("text=履歴")
    rows = page.locator("#change-history table.change-values tbody tr").all_inner_texts()
    page.screenshot(path="/tmp/admin-change-history.png", full_page=True)
    assert rows == ["タイトル\tスタームービー\tスタームービー 完全版"]
    assert "タイトル を変更しました。" in page.locator("#change-history tbody tr").first.inner_text()
    assert page.locator("#change-history table.change-values thead").inner_text().split() == [
        "項目",
        "変更前",
        "変更後",
    ]
    assert "staff" in page.locator("#change-history tbody tr").first.inner_text()  # who made it
    screenshot_in_both_languages(page, page.url, "#content-main", "change-history")
