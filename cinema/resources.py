"""MCP resources of the cinema group: the film catalogue and each show's seat map (subscribable).

Contents are the tools' own shapes (get_movie_list's films, get_seat_availability's seats), as compact JSON.
"""

from __future__ import annotations

from pathlib import Path

from django.dispatch import receiver
from django.utils import timezone

from mcpsite.core.errors import NotFound
from mcpsite.core.jsonutil import dumps
from mcpsite.mcp import subscriptions
from mcpsite.mcp.registry import CallContext
from mcpsite.mcp.resources import Instance, resource, resource_template
from mcpsite.mcp.ui import view

from . import selectors
from .models import Schedule
from .signals import seat_map_changed
from .tools import GROUP, SEAT_PICKER, movie_entry, seat_map_entry

SEAT_MAP = "mcpsite://cinema/schedules/{schedule_id}/seats"
COMPLETIONS = 20
# Seat maps listed in resources/list: the shows still to come, soonest first (the rest are reachable by template).
LISTED_SHOWS = 200


def seat_map_uri(schedule_id: str) -> str:
    return SEAT_MAP.replace("{schedule_id}", schedule_id)


@resource(
    uri="mcpsite://cinema/movies",
    name="movies",
    title="映画カタログ",
    description="上映作品の一覧 (movie_id, title, genre, duration, rating, description, release_date)。",
)
def movie_catalogue(ctx: CallContext) -> str:
    return dumps({"movies": [movie_entry(movie) for movie in selectors.movie_catalogue()]})


def complete_schedule_id(value: str, context: dict[str, str], ctx: CallContext) -> list[str]:
    """Shows still to come whose id starts with what was typed; with a film `title` in the context, that film's."""
    shows = selectors.schedules_upcoming(
        now=timezone.now(), limit=COMPLETIONS, id_prefix=value.strip(), title=context.get("title")
    )
    return [show.public_id for show in shows]


def _upcoming_seat_maps(ctx: CallContext) -> list[Instance]:
    shows = selectors.schedules_upcoming(now=timezone.now(), limit=LISTED_SHOWS)
    return [
        Instance(
            uri=seat_map_uri(show.public_id),
            name=f"seats-{show.public_id}",
            title=f"{show.movie.title} {show.date:%m/%d} {show.start_time:%H:%M} {show.theater.name} の座席",
        )
        for show in shows
    ]


@resource_template(
    uri_template=SEAT_MAP,
    name="seat-map",
    title="上映回の座席表",
    description=(
        "上映回の全座席と状態 (available / reserved / blocked)、空席数・予約数。get_seat_availability と同じ形。"
        "resources/subscribe すると座席が売れる・空くたびに notifications/resources/updated が届く"
        " (セッションが必要)。"
    ),
    complete={"schedule_id": complete_schedule_id},
    instances=_upcoming_seat_maps,
    subscribable=True,
    ui=SEAT_PICKER,
)
def seat_map(variables: dict[str, str], ctx: CallContext) -> str:
    schedule = selectors.schedule_get(public_id=variables["schedule_id"])
    if schedule is None:
        raise NotFound(data=f"Schedule {variables['schedule_id']} not found")
    return dumps(seat_map_entry(selectors.seat_map_get(schedule=schedule)))


view(
    uri=SEAT_PICKER,
    group=GROUP,
    name="seat-picker",
    title="座席ピッカー / Seat picker",
    description=(
        "MCP Apps view of get_seat_availability: the theater's seats, pick seats and book them with a reservation "
        "password typed by the person (reserve_seats through the host)."
    ),
    path=Path(__file__).parent / "ui" / "seat_picker.html",
)


@receiver(seat_map_changed, sender=Schedule, dispatch_uid="cinema.resources.seat_map_changed")
def _publish_seat_map(sender, schedule_id: str, **kwargs) -> None:
    subscriptions.publish(seat_map_uri(schedule_id))
