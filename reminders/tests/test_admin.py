"""Staff pages: delivery status and resend on messages, next fire time and history on reminders, feed rotation."""

import datetime

import pytest

from reminders import services, webhooks
from reminders.models import Message, Profile, Reminder, ReminderDelivery

pytestmark = pytest.mark.django_db

SECRET_HOOK = "https://bot:s3cr3t@hooks.example.com/T0/s3cr3t-token?k=s3cr3t"


@pytest.fixture
def failed_message(owner, contacts):
    message = services.message_send(owner=owner, to="山田花子", text="届かなかった")
    Message.objects.filter(pk=message.pk).update(status="failed", failure_reason="SMTPServerDisconnected: gone")
    return message


@pytest.fixture
def delivered_reminder(owner):
    at = datetime.datetime(2030, 1, 7, 7, 0, tzinfo=datetime.UTC)
    reminder = services.reminder_create(
        owner=owner, time=at, tz="Asia/Tokyo", note="水を飲む", repeat="daily", now=at - datetime.timedelta(hours=1)
    )
    services.reminders_deliver_due(now=at + datetime.timedelta(minutes=10))
    return reminder


def test_message_list_shows_status_and_reason(admin_client, failed_message):
    page = admin_client.get("/admin/reminders/message/").content.decode()
    assert failed_message.public_id in page and "failed" in page and "SMTPServerDisconnected: gone" in page


def test_resend_action_requeues_only_failed(admin_client, failed_message, owner, contacts):
    sent = services.message_send(owner=owner, to="Taro Tanaka", text="ok")
    Message.objects.filter(pk=sent.pk).update(status="sent", sent_at=datetime.datetime.now(datetime.UTC))
    response = admin_client.post(
        "/admin/reminders/message/",
        {"action": "resend", "_selected_action": [failed_message.pk, sent.pk]},
        follow=True,
    )
    text = response.content.decode()
    assert "1 件のメッセージを再び送信待ちにしました。" in text and "再送できるのは失敗したメッセージだけです" in text
    assert Message.objects.get(pk=failed_message.pk).status == "queued"
    assert Message.objects.get(pk=sent.pk).status == "sent"


def test_reminder_page_shows_next_fire_time_and_history(admin_client, delivered_reminder):
    page = admin_client.get("/admin/reminders/reminder/").content.decode()
    assert "2030年1月8日(火) 16:00" in page  # next fire time, in the zone it was written in (the site's)
    detail = admin_client.get(f"/admin/reminders/reminder/{delivered_reminder.pk}/change/").content.decode()
    assert ReminderDelivery.objects.get().reminder == delivered_reminder
    assert "遅延" in detail or "late" in detail
    assert "送信済" in detail and ">sent<" not in detail  # the status label, translated


def test_rotate_feed_token_action(admin_client, owner):
    profile = services.profile_get_or_create(owner=owner)
    old = profile.feed_token
    admin_client.post("/admin/reminders/profile/", {"action": "rotate_feed_token", "_selected_action": [profile.pk]})
    assert Profile.objects.get(pk=profile.pk).feed_token != old


@pytest.mark.parametrize("url", ["ftp://hooks.example.com/x", "file:///etc/passwd", "gopher://127.0.0.1:25/x"])
def test_webhook_must_be_http_or_https(admin_client, owner, url):
    response = admin_client.post("/admin/reminders/profile/add/", {"owner": owner.pk, "webhook_url": url})
    assert response.status_code == 200  # the form again, not a 500
    assert response.context["adminform"].form.errors  # URLField or the http(s) check constraint
    assert not Profile.objects.exists()


def test_profile_list_shows_only_the_webhook_origin(admin_client, owner):
    Profile.objects.create(owner=owner, webhook_url=SECRET_HOOK)
    page = admin_client.get("/admin/reminders/profile/").content.decode()
    assert "https://hooks.example.com" in page and "s3cr3t" not in page


def _save_profile(admin_client, profile, **data):
    return admin_client.post(f"/admin/reminders/profile/{profile.pk}/change/", {"owner": profile.owner_id, **data})


def test_profile_form_never_sends_the_saved_webhook_back(admin_client, owner):
    profile = Profile.objects.create(owner=owner, webhook_url=SECRET_HOOK)
    page = admin_client.get(f"/admin/reminders/profile/{profile.pk}/change/").content.decode()
    assert "https://hooks.example.com/… に設定済みです" in page and "s3cr3t" not in page


def test_profile_form_blank_keeps_the_webhook_a_new_url_replaces_it_the_checkbox_removes_it(admin_client, owner):
    profile = Profile.objects.create(owner=owner, webhook_url=SECRET_HOOK)
    assert _save_profile(admin_client, profile, webhook_url="").status_code == 302
    assert Profile.objects.get().webhook_url == SECRET_HOOK
    assert _save_profile(admin_client, profile, webhook_url="https://new.example.com/h").status_code == 302
    assert Profile.objects.get().webhook_url == "https://new.example.com/h"
    assert _save_profile(admin_client, profile, webhook_url="", remove_webhook="on").status_code == 302
    assert Profile.objects.get().webhook_url == ""
    # Without a saved webhook there is nothing to remove.
    page = admin_client.get(f"/admin/reminders/profile/{profile.pk}/change/").content.decode()
    assert "remove_webhook" not in page


def test_profile_form_refuses_a_bad_replacement_and_keeps_the_saved_webhook(admin_client, owner):
    profile = Profile.objects.create(owner=owner, webhook_url=SECRET_HOOK)
    response = _save_profile(admin_client, profile, webhook_url="ftp://x.example.com/")
    assert response.status_code == 200 and response.context["adminform"].form.errors
    assert Profile.objects.get().webhook_url == SECRET_HOOK


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5:8080/remind",
        "http://127.0.0.1:5432/",
        "http://localhost:8000/",
        "http://[::1]/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://192.168.1.10/",
        "http://0.0.0.0/",
        "http://[::ffff:127.0.0.1]/",
        "http://[fe80::1]/",
        "http://224.0.0.1/",
        "https://intranet.example.com/hook",  # a name that resolves to a private address
        "https://half.example.com/hook",  # one public and one private address
        "https://no-such-host.example.com/hook",
    ],
)
def test_profile_form_refuses_webhooks_to_non_public_hosts(admin_client, owner, fake_dns, url):
    # The worker POSTs there: a private target would let staff reach what only the site can (and probe its ports).
    fake_dns.update({"intranet.example.com": ["10.1.2.3"], "half.example.com": ["93.184.215.14", "192.168.0.7"]})
    fake_dns["localhost"] = ["127.0.0.1", "::1"]
    response = admin_client.post("/admin/reminders/profile/add/", {"owner": owner.pk, "webhook_url": url})
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["webhook_url"] == [webhooks.REFUSED.translated()]
    assert not Profile.objects.exists()


def test_profile_form_accepts_a_public_webhook(admin_client, owner):
    response = admin_client.post("/admin/reminders/profile/add/", {"owner": owner.pk, "webhook_url": SECRET_HOOK})
    assert response.status_code == 302 and Profile.objects.get().webhook_url == SECRET_HOOK


def test_admin_pages_load(admin_client, delivered_reminder, failed_message):
    for path in ["contact", "event", "profile", "reminder", "message"]:
        assert admin_client.get(f"/admin/reminders/{path}/").status_code == 200
    assert admin_client.get(f"/admin/reminders/message/{failed_message.pk}/change/").status_code == 200
    assert admin_client.get("/admin/reminders/contact/add/").status_code == 200
    assert Reminder.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_staff_see_delivery_status_in_the_browser(admin_login, live_server, failed_message, delivered_reminder):
    page = admin_login()
    page.goto(f"{live_server.url}/admin/reminders/message/")
    page.screenshot(path="/tmp/reminders-messages.png", full_page=True)
    assert page.locator("td.field-status_badge").first.inner_text() == "失敗"  # the label, not the raw value
    page.goto(f"{live_server.url}/admin/reminders/reminder/{delivered_reminder.pk}/change/")
    page.screenshot(path="/tmp/reminders-reminder.png", full_page=True)
    assert page.locator("td.field-status_badge").first.inner_text() == "送信済"


@pytest.mark.parametrize(
    ("rule", "japanese", "english"),
    [
        ("", "1回のみ", "Once"),
        ("FREQ=DAILY", "毎日", "Every day"),
        ("FREQ=WEEKLY;BYDAY=MO,TH", "毎週（月, 木）", "Every week on Mon, Thu"),
        ("FREQ=MONTHLY;BYMONTHDAY=-1", "毎月（月末）", "Every month on the last day"),
        ("FREQ=HOURLY;INTERVAL=2", "2時間ごと", "Every 2 hours"),
        ("FREQ=WEEKLY;COUNT=3", "毎週、3回", "Every week, 3 times"),
        ("FREQ=MONTHLY;BYSETPOS=1;BYDAY=1MO", "独自のルール: FREQ=MONTHLY;BYSETPOS=1;BYDAY=1MO", None),
    ],
)
def test_a_repeat_rule_reads_as_words_in_the_staffs_language(rule, japanese, english):
    from django.utils import translation

    from reminders.schedule import describe_rule

    with translation.override("ja"):
        assert describe_rule(rule) == japanese
    with translation.override("en"):
        assert describe_rule(rule) == (english or f"Custom rule: {rule}")
