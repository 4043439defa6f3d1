"""The admin still renders and runs its scripts under the Content-Security-Policy, in a real browser."""

import datetime

import pytest
from django.db import connection
from django.utils import timezone

from cinema.tests.conftest import make_movie, make_schedule, make_theater
from mcpsite.models import ApiKey, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)


def test_admin_pages_work_under_the_csp_with_secure_cookies(admin_login, live_server, django_user_model):
    violations = []
    page = admin_login()  # signs in: the Secure session and CSRF cookies are kept on http://localhost
    page.on(
        "console",
        lambda message: violations.append(message.text) if "Content Security Policy" in message.text else None,
    )
    owner = django_user_model.objects.get(username="staff")
    key = ApiKey.objects.create(name="k", owner=owner, scopes=["cinema"], digest="d" * 64, prefix="mcp_k")
    for n in range(3):
        ToolCall.objects.create(api_key=key, transport="rpc", tool="get_movie_list", outcome="ok", request_id=f"r{n}")
    show = make_schedule(make_movie(), make_theater(), timezone.localdate() + datetime.timedelta(days=1), "18:00")
    try:
        page.goto(f"{live_server.url}/admin/mcpsite/toolcall/")
        page.click("#action-toggle")  # admin/js/actions.js: ticks every row
        assert page.locator("input.action-select:checked").count() == 3
        page.goto(f"{live_server.url}/admin/cinema/schedule/{show.pk}/change/")
        page.wait_for_selector(".cinema-seat-map")
        colour = page.eval_on_selector('[data-seat="A1"]', "el => getComputedStyle(el).backgroundColor")
        assert colour != "rgba(0, 0, 0, 0)"  # the page's <style> block applied
        page.goto(f"{live_server.url}/admin/ledger/account/reports/balance-sheet/")
        page.goto(f"{live_server.url}/admin/mcpsite/apikey/add/")
        page.wait_for_selector("#id_name")
    finally:
        connection.close()  # see cinema's browser test: Playwright's loop leaves a context-local connection
    assert violations == []
