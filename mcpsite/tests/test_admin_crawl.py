"""No staff input gets a 500: every admin page, as each staff role, with every GET parameter at its extremes.

The crawl signs in as the superuser, as a member of each staff group (`mcpsite.staff_roles`) and as staff with no
permission, and opens every page of every registered ModelAdmin (changelist, add, change, history and delete pages of
a sample object, and each admin's own pages: reports, exports, printed sheets, stock, resolve) and the index. Then,
as the superuser, each page again with each GET parameter it offers (its forms' fields, its filter links' keys, the
report and date parameters) set to an extreme: the last and first dates, huge and negative numbers, junk. Every
answer must be below 500; a refused value is a page that says why (never an empty body).
"""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, reverse

from mcpsite.tests.test_i18n import seed_demo_world

pytestmark = pytest.mark.django_db

EXTREMES = ["9999-12-31", "0001-01-01", "99999999999999999999999", "-1", "0", "junk", "2026-02-30", "%00", ""]
# Parameters every page is tried with, besides those it offers: the reports' dates, the day sheet's, the CSV switch.
ALWAYS = ["as_of", "start", "end", "date", "format", "fiscal_year", "q", "o", "p"]
NAME = re.compile(r'<(?:input|select|textarea)[^>]*\bname="([^"]+)"')
HREF = re.compile(r'href="(\?[^"]*)"')
DATEISH = re.compile(r"date|as_of|start|end|_at|year|month|day|__gte|__lt|__lte|__gt|^p$|count|rate")
SKIP_PARAMS = {"csrfmiddlewaretoken", "_selected_action", "action", "select_across", "index", "post"}


def sample_pk(model) -> str | None:
    obj = model._default_manager.order_by("pk").first()
    return None if obj is None else str(obj.pk)


def admin_pages() -> list[str]:
    """Every GET page of the admin site with a sample object where a page needs one."""
    pages = [reverse("admin:index")]
    for model, model_admin in admin.site._registry.items():
        pk = sample_pk(model)
        pages.append(reverse("admin:app_list", args=[model._meta.app_label]))
        for pattern in model_admin.get_urls():
            if not isinstance(pattern, URLPattern) or not pattern.name:
                continue
            converters = pattern.pattern.converters
            if not converters:
                pages.append(reverse(f"admin:{pattern.name}"))
            elif pk is not None and len(converters) == 1:
                pages.append(reverse(f"admin:{pattern.name}", args=[pk]))
    return sorted(set(pages))


def offered_params(html: str) -> set[str]:
    names = {unescape(name) for name in NAME.findall(html)}
    for href in HREF.findall(html):
        names |= {key for key, _value in parse_qsl(unescape(href)[1:], keep_blank_values=True)}
    return {name for name in names if name not in SKIP_PARAMS and "-" not in name} | set(ALWAYS)


@pytest.fixture
def world(monkeypatch, django_user_model):
    seed_demo_world(monkeypatch)
    return staff_per_role(django_user_model, superuser=django_user_model.objects.get(username="admin"))


def staff_per_role(django_user_model, *, superuser, prefix: str = "crawl") -> dict:
    """{role: user}: the superuser, a member of each staff group (`mcpsite.staff_roles`), and "nobody" (staff
    without a permission)."""
    from mcpsite.staff_roles import staff_groups_ensure

    users = {"superuser": superuser}
    for group in staff_groups_ensure():
        user = django_user_model.objects.create_user(f"{prefix}-{group.pk}", password="x" * 12, is_staff=True)
        user.groups.add(group)
        users[group.name] = user
    users["nobody"] = django_user_model.objects.create_user(f"{prefix}-nobody", password="x" * 12, is_staff=True)
    return users


def failures(client: Client, url: str) -> list[str]:
    response = client.get(url)
    if response.status_code >= 500:
        return [f"{response.status_code} {url}"]
    if response.status_code == 400 and not getattr(response, "streaming", False) and not response.content.strip():
        return [f"400 with an empty page: {url}"]
    return []


def test_every_admin_page_as_every_role_answers_below_500(world):
    pages = admin_pages()
    assert len(pages) > 60
    bad = []
    for role, user in world.items():
        client = Client(raise_request_exception=False)
        client.force_login(user)
        bad += [f"{role}: {failure}" for url in pages for failure in failures(client, url)]
    assert bad == []


def test_every_get_parameter_at_its_extremes_answers_below_500(world):
    """Each page with all its parameters at once at each extreme, then each date-like or numeric parameter alone at
    the first and last dates and a huge number (alone, so no other parameter's refusal hides it)."""
    client = Client(raise_request_exception=False)
    client.force_login(world["superuser"])
    bad = []
    for url in admin_pages():
        response = client.get(url)
        if response.status_code != 200 or getattr(response, "streaming", False):
            continue
        path = urlsplit(url).path
        offered = offered_params(response.content.decode())
        for value in EXTREMES:
            bad += failures(client, f"{path}?{urlencode(dict.fromkeys(sorted(offered), value))}")
        for name in sorted(name for name in offered if DATEISH.search(name)):
            for value in EXTREMES[:3]:
                bad += failures(client, f"{path}?{urlencode({name: value})}")
    assert bad == []
