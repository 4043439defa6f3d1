"""The cinema resources, prompt and completers through the official client (in process, real SDK server), and
seat-map subscriptions: a seat sold or freed by any caller reaches the subscribed session."""

from __future__ import annotations

import json

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference, ResourceTemplateReference

from cinema import services
from cinema.models import Reservation, Schedule
from cinema.resources import SEAT_MAP
from mcpsite.mcp import subscriptions, threads

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # Protocol 2026-07-28 replaces resources/subscribe with subscriptions/listen; the 2025-11-25 clients we serve
    # (and the issue) use resources/subscribe, which the SDK client marks deprecated.
    pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed"),
]

SEATS_S001 = "mcpsite://cinema/schedules/s001/seats"


def _text(result) -> str:
    return result.contents[0].text


def test_catalogue_lists_every_film_as_get_movie_list_shows_it(mcp_run, seed_world, call_tool):
    async def scenario(client):
        return json.loads(_text(await client.read_resource("mcpsite://cinema/movies")))

    catalogue = mcp_run(scenario)
    listed = call_tool("get_movie_list", {"date": "2026-02-20"})["movies"]
    assert catalogue == {"movies": sorted(({k: v for k, v in m.items() if k != "recommended"} for m in listed),
                                          key=lambda m: m["title"])}  # fmt: skip


def test_seat_map_resource_is_get_seat_availability(mcp_run, seed_world, call_tool):
    services.reservation_create(schedule_id="s001", seats=["A1", "A2"], password="secret12")

    async def scenario(client):
        result = await client.read_resource(SEATS_S001)
        return result.contents[0]

    contents = mcp_run(scenario)
    assert contents.mime_type == "application/json"
    assert json.loads(contents.text) == call_tool("get_seat_availability", {"schedule_id": "s001"})
    assert json.loads(contents.text)["reserved_count"] == 2


def test_seat_maps_of_shows_to_come_are_listed(mcp_run, seed_world):
    async def scenario(client):
        return {str(r.uri): r.title for r in (await client.list_resources()).resources}

    listed = mcp_run(scenario)
    assert listed[SEATS_S001] == "スタームービー 02/20 10:00 シアター1 の座席"
    assert {"mcpsite://cinema/schedules/s002/seats", "mcpsite://cinema/schedules/s003/seats"} <= set(listed)


def test_unknown_show_is_a_404_naming_it(mcp_run, seed_world):
    async def scenario(client):
        with pytest.raises(MCPError) as excinfo:
            await client.read_resource("mcpsite://cinema/schedules/s999/seats")
        return excinfo.value

    error = mcp_run(scenario)
    assert error.error.code == 404 and error.error.data == "Schedule s999 not found"


@pytest.mark.parametrize("typed", ["ｽﾀｰﾑｰﾋﾞｰ", "すたーむーびー", "スタームビー", "スター・ムービー"])
def test_film_titles_complete_with_the_tools_spelling_tolerance(mcp_run, seed_world, typed):
    async def scenario(client):
        ref = PromptReference(name="book_seats_for_film")
        return (await client.complete(ref, {"name": "title", "value": typed})).completion

    completion = mcp_run(scenario)
    assert completion.values[0] == "スタームービー"


def test_schedule_ids_complete_from_shows_to_come_narrowed_by_film(mcp_run, seed_world):
    ref = ResourceTemplateReference(uri=SEAT_MAP)

    async def scenario(client):
        every = await client.complete(ref, {"name": "schedule_id", "value": "s00"})
        of_film = await client.complete(ref, {"name": "schedule_id", "value": ""}, {"title": "スターダスト"})
        none = await client.complete(ref, {"name": "schedule_id", "value": "x"})
        return every.completion.values, of_film.completion.values, none.completion.values

    every, of_film, none = mcp_run(scenario)
    assert every == ["s001", "s003", "s002"]  # soonest first
    assert of_film == ["s003"]
    assert none == []


def test_started_shows_are_not_offered(mcp_run, seed_world, freeze_now):
    import datetime

    from cinema.tests.conftest import TOKYO

    freeze_now(datetime.datetime(2026, 2, 20, 13, 30, tzinfo=TOKYO))  # s001 (10:00) and s003 (13:00) started

    async def scenario(client):
        ref = ResourceTemplateReference(uri=SEAT_MAP)
        return (await client.complete(ref, {"name": "schedule_id", "value": ""})).completion.values

    assert mcp_run(scenario) == ["s002"]


def test_booking_prompt_renders_with_real_arguments(mcp_run, seed_world):
    async def scenario(client):
        return await client.get_prompt(
            "book_seats_for_film", {"title": "スタームービー", "date": "2026-02-20", "count": "2"}
        )

    result = mcp_run(scenario)
    text = result.messages[0].content.text
    assert result.messages[0].role == "user"
    assert "映画「スタームービー」の座席を 2 席予約したい" in text
    for tool in ("get_movie_list", "get_show_schedule", "suggest_seats", "reserve_seats", "get_reservation_details"):
        assert tool in text
    assert "date に 2026-02-20" in text and "count=2" in text


def _subscribed(fn, *, updates: list, uri: str = SEATS_S001):
    """`fn(client, wait_for_update)` in a session subscribed to `uri`; updates' URIs are appended to `updates`."""
    arrived = []

    async def handler(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            if arrived:
                arrived[-1].set()

    async def scenario(client):
        await client.subscribe_resource(uri)

        async def wait_for_update(action):
            arrived.append(anyio.Event())
            await threads.in_worker_thread(action)()  # another caller, which gives its connection back
            with anyio.fail_after(10):  # a guard against hanging, not a speed assertion
                await arrived[-1].wait()

        return await fn(client, wait_for_update)

    return scenario, handler


def test_subscribers_hear_of_a_seat_sold_and_freed_by_another_caller(mcp_run, seed_world):
    """Seats sold and freed outside this session (another request, the admin) notify the subscribed session."""
    updates: list[str] = []

    def sell():
        services.reservation_create(schedule_id="s001", seats=["C3"], password="secret12")

    def free():
        reservation = Reservation.objects.get(schedule__public_id="s001")
        services.reservation_cancel(reservation=reservation, source=Reservation.Source.STAFF)

    async def fn(client, wait_for_update):
        await wait_for_update(sell)
        after_sale = json.loads(_text(await client.read_resource(SEATS_S001)))
        await wait_for_update(free)
        after_cancel = json.loads(_text(await client.read_resource(SEATS_S001)))
        return after_sale, after_cancel

    scenario, handler = _subscribed(fn, updates=updates)
    after_sale, after_cancel = mcp_run(scenario, message_handler=handler)
    assert updates == [SEATS_S001, SEATS_S001]
    assert after_sale["reserved_count"] == 1 and after_cancel["reserved_count"] == 0
    assert subscriptions.hub.count(SEATS_S001) == 0  # the session ended, and its subscription with it


def test_a_layout_change_reaches_the_subscribers_of_the_shows_to_come(mcp_run, seed_world):
    """Blocking a seat (the admin's layout builder) changes the seat map of every show to come in that theater."""
    updates: list[str] = []
    theater = Schedule.objects.select_related("theater").get(public_id="s001").theater

    def block_a1():
        services.theater_set_layout(theater=theater, rows=theater.rows, columns=theater.columns, blocked={"A1"})

    async def fn(client, wait_for_update):
        await wait_for_update(block_a1)
        return json.loads(_text(await client.read_resource(SEATS_S001)))

    scenario, handler = _subscribed(fn, updates=updates)
    seat_map = mcp_run(scenario, message_handler=handler)
    assert updates == [SEATS_S001]
    assert {s["seat_id"]: s["status"] for s in seat_map["seats"]}["A1"] == "blocked"


def test_other_shows_and_unsubscribed_sessions_hear_nothing(mcp_run, seed_world):
    updates: list[str] = []

    async def fn(client, wait_for_update):
        await client.subscribe_resource("mcpsite://cinema/schedules/s002/seats")
        await client.unsubscribe_resource(SEATS_S001)
        # s001 changes: nobody listens any more. s002 changes: heard (and it is the only update heard).
        await threads.in_worker_thread(services.reservation_create)(
            schedule_id="s001", seats=["A1"], password="secret12"
        )
        await wait_for_update(
            lambda: services.reservation_create(schedule_id="s002", seats=["A1"], password="secret12")
        )

    scenario, handler = _subscribed(fn, updates=updates)
    mcp_run(scenario, message_handler=handler)
    assert updates == ["mcpsite://cinema/schedules/s002/seats"]
    assert subscriptions.hub.count(SEATS_S001) == 0


def test_a_refused_booking_sends_no_update(seed_world, monkeypatch):
    """Updates follow commits: a booking that fails (a seat conflict) publishes nothing."""
    published = []
    monkeypatch.setattr(subscriptions, "publish", published.append)
    services.reservation_create(schedule_id="s001", seats=["A1"], password="secret12")
    with pytest.raises(Exception, match="Seat conflict"):
        services.reservation_create(schedule_id="s001", seats=["A1"], password="secret12")
    assert published == [SEATS_S001]


def test_subscribing_to_an_unknown_show_or_the_catalogue_is_refused(mcp_run, seed_world):
    async def scenario(client):
        with pytest.raises(MCPError) as unknown:
            await client.subscribe_resource("mcpsite://cinema/schedules/s999/seats")
        with pytest.raises(MCPError) as static:
            await client.subscribe_resource("mcpsite://cinema/movies")
        return unknown.value, static.value

    unknown, static = mcp_run(scenario)
    assert unknown.error.code == 404
    assert static.error.code == -32602 and static.error.message == "This resource does not send updates"
