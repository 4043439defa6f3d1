"""The tool-call list over a large log: its filters' choices, its date hierarchy and its total come from indexed
one-row queries and one COUNT, never from a DISTINCT over every row (bench/bench_staff_pages.py measures it at
1,000,000 calls), and it offers what Django's own filters and date hierarchy offer."""

from __future__ import annotations

import datetime
import re

import pytest
from django.contrib.admin.templatetags.admin_list import date_hierarchy as django_date_hierarchy
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from mcpsite.admin_lists import distinct_values
from mcpsite.models import ToolCall
from mcpsite.templatetags.bounded_dates import bounded_date_hierarchy

pytestmark = pytest.mark.django_db

LIST = "/admin/mcpsite/toolcall/"


def call_on(day: datetime.date, *, tool: str = "list_shows", transport: str = "http") -> ToolCall:
    noon = timezone.make_aware(datetime.datetime.combine(day, datetime.time(12)))
    return ToolCall.objects.create(
        created_at=noon, tool=tool, transport=transport, outcome="ok", request_id=f"{tool}-{day}"
    )


@pytest.fixture
def every_day():
    """One call a day from 2025-12-20 to 2026-02-10 (local): no year, month or day without calls in between, so
    Django's date hierarchy and ours must offer the same."""
    first = datetime.date(2025, 12, 20)
    tools = ["list_shows", "book_seats", "resolve_points"]
    for n in range((datetime.date(2026, 2, 10) - first).days + 1):
        call_on(first + datetime.timedelta(days=n), tool=tools[n % 3], transport=["http", "stdio", "ws"][n % 3])


def test_distinct_values_are_select_distinct_in_order(every_day):
    calls = ToolCall.objects.all()
    expected = list(calls.order_by("tool").values_list("tool", flat=True).distinct())
    assert distinct_values(calls, "tool") == expected == ["book_seats", "list_shows", "resolve_points"]
    assert distinct_values(calls, "tool", limit=2) == expected[:2]
    assert distinct_values(calls.filter(tool="none"), "tool") == []


def test_the_list_reads_no_distinct_and_counts_once(admin_client, every_day):
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(LIST)
    assert response.status_code == 200
    statements = [q["sql"].upper() for q in queries if "MCPSITE_TOOLCALL" in q["sql"].upper()]
    assert not [sql for sql in statements if "DISTINCT" in sql]
    assert sum("COUNT(" in sql for sql in statements) == 1  # the paginator's; no second, unfiltered total
    cl = response.context["cl"]
    assert cl.result_count == ToolCall.objects.count()
    choices = {spec.parameter_name: [c["display"] for c in spec.choices(cl)] for spec in cl.filter_specs[1:3]}
    assert choices["tool__exact"][1:] == ["book_seats", "list_shows", "resolve_points"]
    assert choices["transport__exact"][1:] == ["http", "stdio", "ws"]


@pytest.mark.parametrize("lookup, field", [("tool__exact=book_seats", "tool"), ("transport__exact=ws", "transport")])
def test_a_filter_choice_lists_its_calls(admin_client, every_day, lookup, field):
    response = admin_client.get(f"{LIST}?{lookup}")
    value = lookup.split("=")[1]
    assert response.status_code == 200
    assert response.context["cl"].result_count == ToolCall.objects.filter(**{field: value}).count() > 0
    assert {getattr(call, field) for call in response.context["cl"].result_list} == {value}


@pytest.mark.parametrize(
    "query",
    [
        "",
        "created_at__year=2025",
        "created_at__year=2026",
        "created_at__year=2026&created_at__month=1",
        "created_at__year=2026&created_at__month=2",
        "created_at__year=2026&created_at__month=1&created_at__day=31",
        "created_at__day=1",
        "transport__exact=http&created_at__year=2025",
    ],
)
def test_the_date_hierarchy_offers_what_djangos_offers(admin_client, every_day, query):
    cl = admin_client.get(f"{LIST}?{query}").context["cl"]
    ours = bounded_date_hierarchy(cl)
    assert ours == django_date_hierarchy(cl)
    assert ours["choices"]


def days(hierarchy: dict) -> list[int]:
    return [int(re.search(r"created_at__day=(\d+)", c["link"])[1]) for c in hierarchy["choices"]]


def test_the_date_hierarchy_opens_on_the_only_month_and_reads_two_rows(admin_client):
    for day in (3, 5):
        call_on(datetime.date(2026, 3, day))
    cl = admin_client.get(LIST).context["cl"]
    with CaptureQueriesContext(connection) as queries:
        ours = bounded_date_hierarchy(cl)
    assert len(queries) == 2 and all("LIMIT 1" in q["sql"].upper() for q in queries)
    # Every day between the first and the last call is offered, the 4th (no calls) too: its list is empty.
    assert [days(ours)] == [[3, 4, 5]] and days(django_date_hierarchy(cl)) == [3, 5]
    assert admin_client.get(f"{LIST}?created_at__year=2026&created_at__month=3&created_at__day=4").status_code == 200


def test_an_empty_list_offers_no_dates(admin_client):
    cl = admin_client.get(LIST).context["cl"]
    assert bounded_date_hierarchy(cl) == django_date_hierarchy(cl)
    cl = admin_client.get(f"{LIST}?created_at__year=2020").context["cl"]
    assert bounded_date_hierarchy(cl)["choices"] == django_date_hierarchy(cl)["choices"] == []


def test_a_list_past_the_count_cap_counts_no_further_and_says_so(admin_client, every_day, monkeypatch):
    """CappedCountPaginator: the count reads at most the cap plus one row (a LIMIT inside the COUNT), the list
    pages through the cap and says "N+"; under the cap it counts exactly as Django does."""
    from mcpsite import admin_lists

    monkeypatch.setattr(admin_lists, "COUNT_CAP", 20)
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(LIST)
    counts = [q["sql"].upper() for q in queries if "COUNT(" in q["sql"].upper()]
    assert len(counts) == 1 and "LIMIT 21" in counts[0]
    cl = response.context["cl"]
    assert (cl.result_count, cl.paginator.num_pages, cl.paginator.count_capped) == (20, 1, True)
    html = response.content.decode()
    assert re.search(r"20\+\s*(tool calls|ツール呼び出し)", html), "the paginator says 20+"
    one_tool = admin_client.get(LIST, {"tool__exact": "book_seats"}).context["cl"]
    assert (one_tool.result_count, one_tool.paginator.count_capped) == (
        ToolCall.objects.filter(tool="book_seats").count(),
        False,
    )
    searched = admin_client.get(LIST, {"q": "s"})  # every tool name has an s
    assert "20+" in searched.content.decode()  # the search bar's "N results" too


def test_a_request_id_search_is_one_exact_indexed_match(admin_client, every_day):
    """A request ID is looked up by equality (its index), not by a LIKE over every row; other terms still search
    the tool's name as Django does."""
    call = ToolCall.objects.order_by("created_at")[5]
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(LIST, {"q": f" {call.request_id} "})
    assert [r.pk for r in response.context["cl"].result_list] == [call.pk]
    assert not [q for q in queries if "LIKE" in q["sql"].upper() and "MCPSITE_TOOLCALL" in q["sql"].upper()]
    partial = admin_client.get(LIST, {"q": "book_se"}).context["cl"]
    assert partial.result_count == ToolCall.objects.filter(tool="book_seats").count() > 1
