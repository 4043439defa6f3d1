"""GaluchatAPI settings, converted and validated in one place.

`settings.py` holds the raw environment values (the seed's PHP include became Django settings);
`config_problems()` explains what is wrong with them (the system check reports it at startup) and
`galuchat_config()` returns the converted values every caller reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from mcpsite.core.problems import Problem

GRANULARITIES = ("admin", "estat", "jarl")

# The mapsets GaluchatAPI publishes (nyatla/galuchat-api-doc, current_setting.md), by code family.
# /raacs and /rjccs take AACODE maps, /resareas takes ESCODE maps.
AACODE_MAPSETS = frozenset({"ma100", "ma1000", "ma10000"})
AACODE_DEV_MAPSETS = frozenset({"sc100", "sc1000"})  # published, but "development only, do not use"
ESCODE_MAPSETS = frozenset({"estatremap10000"})
MAPSET_FAMILY = {"admin": "AACODE", "estat": "ESCODE", "jarl": "AACODE"}
ENDPOINTS = {"admin": "/raacs", "estat": "/resareas", "jarl": "/rjccs"}
# The published per-call limit of /raacs and /rjccs (applied to /resareas as well).
UPSTREAM_MAX_POINTS = 1000


@dataclass(frozen=True, slots=True)
class GaluchatConfig:
    base_url: str
    timeout_s: float
    unit: Decimal
    mapsets: dict[str, str]
    cache_ttl: int
    max_points_per_request: int
    requests_per_second: float
    max_points: int

    def endpoint_url(self, granularity: str) -> str:
        return self.base_url + ENDPOINTS[granularity]


_MISSING = object()


def _int(value: Any) -> int | None:
    """An int from an int or a decimal-digit string; None for anything else (bool included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _read(problems: list[Problem]) -> dict[str, Any]:
    raw = {}
    for name in (
        "GALUCHAT_BASE_URL",
        "GALUCHAT_TIMEOUT_MS",
        "GALUCHAT_UNIT",
        "GALUCHAT_MAPSET_ADMIN",
        "GALUCHAT_MAPSET_ESTAT",
        "GALUCHAT_MAPSET_JARL",
        "GALUCHAT_CACHE_TTL",
        "GALUCHAT_MAX_POINTS_PER_REQUEST",
        "GALUCHAT_REQUESTS_PER_SECOND",
        "RESOLVE_POINTS_MAX_POINTS",
    ):
        raw[name] = getattr(settings, name, _MISSING)
        if raw[name] is _MISSING:
            problems.append(Problem("geo.E001", f"{name} is missing from the settings", f"Set the {name} variable."))
    return raw


def _convert(raw: dict[str, Any], problems: list[Problem]) -> dict[str, Any]:
    """The settings converted to the config's fields; what cannot be converted is a problem instead."""
    values: dict[str, Any] = {}
    _convert_base_url(raw, problems, values)
    _convert_numbers(raw, problems, values)
    mapsets = _convert_mapsets(raw, problems)
    if len(mapsets) == len(GRANULARITIES):
        values["mapsets"] = mapsets
    return values


def _bad(problems: list[Problem], raw: dict[str, Any], id_: str, name: str, expected: str) -> None:
    problems.append(Problem(id_, f"{name}={raw[name]!r} is not {expected}", f"Fix the {name} variable."))


def _convert_base_url(raw: dict[str, Any], problems: list[Problem], values: dict[str, Any]) -> None:
    url = raw["GALUCHAT_BASE_URL"]
    if url is _MISSING:
        return
    parts = urlsplit(url) if isinstance(url, str) else None
    if not parts or parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        _bad(problems, raw, "geo.E002", "GALUCHAT_BASE_URL", "an http(s) URL without query or fragment")
    else:
        values["base_url"] = url.rstrip("/")


def _convert_numbers(raw: dict[str, Any], problems: list[Problem], values: dict[str, Any]) -> None:
    for name, key, low, high, id_ in (
        ("GALUCHAT_TIMEOUT_MS", "timeout_ms", 1, 600_000, "geo.E003"),
        ("GALUCHAT_CACHE_TTL", "cache_ttl", 0, None, "geo.E003"),
        ("GALUCHAT_MAX_POINTS_PER_REQUEST", "max_points_per_request", 1, UPSTREAM_MAX_POINTS, "geo.E003"),
        ("RESOLVE_POINTS_MAX_POINTS", "max_points", 1, None, "geo.E003"),
    ):
        if raw[name] is _MISSING:
            continue
        number = _int(raw[name])
        if number is None or number < low or (high is not None and number > high):
            _bad(problems, raw, id_, name, f"an integer from {low} to {high}" if high else f"an integer >= {low}")
        else:
            values[key] = number

    if raw["GALUCHAT_UNIT"] is not _MISSING:
        unit = _decimal(raw["GALUCHAT_UNIT"])
        if unit is None or unit <= 0 or unit > 1:
            _bad(problems, raw, "geo.E004", "GALUCHAT_UNIT", "a decimal number in (0, 1], e.g. 0.001")
        else:
            values["unit"] = unit

    if raw["GALUCHAT_REQUESTS_PER_SECOND"] is not _MISSING:
        rate = _decimal(raw["GALUCHAT_REQUESTS_PER_SECOND"])
        if rate is None or rate <= 0:
            _bad(problems, raw, "geo.E003", "GALUCHAT_REQUESTS_PER_SECOND", "a positive number")
        else:
            values["requests_per_second"] = float(rate)


def _convert_mapsets(raw: dict[str, Any], problems: list[Problem]) -> dict[str, str]:
    """Each granularity's mapset, when it is one of its endpoint's family (a development one with a warning)."""
    mapsets = {}
    for granularity in GRANULARITIES:
        name = f"GALUCHAT_MAPSET_{granularity.upper()}"
        value = raw[name]
        if value is _MISSING:
            continue
        family = MAPSET_FAMILY[granularity]
        allowed = AACODE_MAPSETS if family == "AACODE" else ESCODE_MAPSETS
        if not isinstance(value, str):
            _bad(problems, raw, "geo.E005", name, "a mapset name")
        elif value in allowed:
            mapsets[granularity] = value
        elif family == "AACODE" and value in AACODE_DEV_MAPSETS:
            mapsets[granularity] = value
            problems.append(
                Problem(
                    "geo.W001",
                    f"{name}={value!r} is a development-only GaluchatAPI mapset",
                    f"Use one of {sorted(AACODE_MAPSETS)}.",
                    warning=True,
                )
            )
        else:
            problems.append(_wrong_mapset(granularity, name, value, family, allowed))
    return mapsets


def _wrong_mapset(granularity: str, name: str, value: str, family: str, allowed: frozenset[str]) -> Problem:
    other = "ESCODE" if family == "AACODE" else "AACODE"
    wrong_family = value in (ESCODE_MAPSETS if other == "ESCODE" else AACODE_MAPSETS | AACODE_DEV_MAPSETS)
    return Problem(
        "geo.E005",
        f"{name}={value!r} is "
        + (f"an {other} mapset, but {granularity} needs an {family} one" if wrong_family else "unknown"),
        f"{granularity} calls {ENDPOINTS[granularity]}, which takes {family} mapsets: {sorted(allowed)}.",
    )


def config_problems() -> list[Problem]:
    """Everything wrong with the GALUCHAT_* / RESOLVE_POINTS_* settings (empty when all is well)."""
    problems: list[Problem] = []
    _convert(_read(problems), problems)
    return problems


def galuchat_config() -> GaluchatConfig:
    """The converted settings. Raises ImproperlyConfigured (the system check names the fix)."""
    problems: list[Problem] = []
    values = _convert(_read(problems), problems)
    errors = [p for p in problems if not p.warning]
    if errors:
        raise ImproperlyConfigured("; ".join(p.message for p in errors))
    return GaluchatConfig(
        base_url=values["base_url"],
        timeout_s=values["timeout_ms"] / 1000,
        unit=values["unit"],
        mapsets=values["mapsets"],
        cache_ttl=values["cache_ttl"],
        max_points_per_request=values["max_points_per_request"],
        requests_per_second=values["requests_per_second"],
        max_points=values["max_points"],
    )
