"""Writes: saved point lookups for staff. The resolving itself (HTTP to GaluchatAPI) is resolve.points_resolve."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.utils import timezone

from mcpsite.core.db import durable

from .errors import GeoError, InvalidInput
from .models import PointLookup
from .resolve import points_resolve

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _resolve(granularity: str, points: list[dict[str, Any]]) -> tuple[list | None, dict | None]:
    """(results, None) or (None, seed error). Bad input raises InvalidInput: nothing is saved for it."""
    try:
        return points_resolve(granularity=granularity, points=points), None
    except InvalidInput:
        raise
    except GeoError as exc:
        return None, exc.as_seed_error()["error"]


def point_lookup_create(
    *, granularity: str, points: list[dict[str, Any]], name: str = "", actor: User | None = None
) -> PointLookup:
    """Resolve `points` and save the outcome (results or the upstream error) as a lookup.

    GaluchatAPI is called before the transaction opens, so no lock or connection is held while
    waiting on the network.
    """
    results, error = _resolve(granularity, points)
    with durable():
        return PointLookup.objects.create(
            name=name,
            granularity=granularity,
            points=points,
            point_count=len(points),
            results=results,
            error=error,
            created_by=actor,
            resolved_at=timezone.now(),
        )


def point_lookup_refresh(*, lookup: PointLookup) -> PointLookup:
    """Resolve a saved lookup again (e.g. after a GaluchatAPI outage) and store the new outcome."""
    results, error = _resolve(lookup.granularity, lookup.points)
    with durable():
        # Locks the lookup so two refreshes write their outcomes one after the other, never interleaved.
        locked = PointLookup.objects.select_for_update().get(pk=lookup.pk)
        locked.results, locked.error, locked.resolved_at = results, error, timezone.now()
        locked.save(update_fields=["results", "error", "resolved_at"])
    return locked
