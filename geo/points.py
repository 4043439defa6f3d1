"""Input points: validation (seed 3.1 / 5.1) and the degrees -> integer conversion (seed 5.4).

The integer for GaluchatAPI is `round(degrees / unit)` computed in decimal arithmetic with ties
rounded half-up (away from zero), from the shortest decimal text of the float the client sent.
Float division gets boundary values wrong: 139.0005 / 0.001 is 139000.49999999997 in binary.
"""

from __future__ import annotations

import math
import unicodedata
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, NamedTuple

from .errors import InvalidInput, point_location

REF_MAX_LENGTH = 128
_LIMITS = {"lat": 90, "lon": 180}
_PLAIN = (int, float)  # exact types: bool is a subclass of int and is refused
_INVALID = object()  # the marker of a point whose coordinates are not two plain numbers


class InputPoint(NamedTuple):
    """One validated point: its integer [lon, lat] for GaluchatAPI and its ref (when the input had one)."""

    key: tuple[int, int]
    has_ref: bool
    ref: str | None


# NamedTuple's generated __new__ is Python code; tuple.__new__ builds the same object in C (10,000 a call).
_new_point = tuple.__new__


def _printable(text: str) -> bool:
    # Letters, marks, numbers, punctuation, symbols and spaces (the ideographic space too);
    # control, format, surrogate, private-use and unassigned characters and line breaks are refused.
    if text.isprintable():
        return True
    return all(unicodedata.category(ch)[0] != "C" and unicodedata.category(ch) not in ("Zl", "Zp") for ch in text)


def _check_ref(point: dict, index: int) -> tuple[bool, str | None]:
    if "ref" not in point:
        return False, None
    ref = point["ref"]
    if ref is None or (type(ref) is str and len(ref) <= REF_MAX_LENGTH and ref.isprintable()):
        return True, ref
    where = point_location(index)
    if not isinstance(ref, str):
        raise InvalidInput(f"{where}.ref must be a string or null, not {_kind(ref)}", where)
    if len(ref) > REF_MAX_LENGTH:
        raise InvalidInput(f"{where}.ref is {len(ref)} characters long; at most {REF_MAX_LENGTH} are allowed", where)
    if not _printable(ref):
        raise InvalidInput(f"{where}.ref contains a control or non-printable character", where)
    return True, ref


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _coordinate_error(point: dict, name: str, index: int, ref: str | None, has_ref: bool) -> InvalidInput | None:
    """Why `point[name]` is not a usable coordinate (None when it is)."""
    where, field = point_location(index, ref, has_ref=has_ref), f"{point_location(index)}.{name}"
    if name not in point:
        return InvalidInput(f"{field} is required", where)
    value = point[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return InvalidInput(f"{field} must be a number, not {_kind(value)}", where)
    if isinstance(value, float) and not math.isfinite(value):
        return InvalidInput(f"{field} must be a finite number, not {value}", where)
    limit = _LIMITS[name]
    if not -limit <= value <= limit:
        return InvalidInput(f"{field}={value} is outside -{limit}..{limit}", where)
    return None


def to_unit_integer(degrees: Decimal, unit: Decimal) -> int:
    """`degrees / unit` rounded half-up (ties away from zero) in exact decimal arithmetic."""
    return int((degrees / unit).to_integral_value(rounding=ROUND_HALF_UP))


def parse_points(points: list[Any], *, unit: Decimal, max_points: int) -> list[InputPoint]:
    """Validate every point in order; the first bad one raises InvalidInput naming its index and ref."""
    if len(points) > max_points:
        raise InvalidInput(f"{len(points)} points were sent; at most {max_points} are allowed per call", "points")
    parsed = []
    append = parsed.append
    # A repeated (lon, lat) pair was validated and converted the first time it was seen; a hit skips both.
    # (1 and 1.0 are one key here, and convert to the same integer; NaN never equals itself, so never hits.)
    keys: dict[tuple[float | int, float | int], tuple[int, int]] = {}
    integers: dict[float | int, int] = {}  # a coordinate shared by distinct pairs is converted once

    def to_integer(value: float | int) -> int:
        result = integers.get(value)
        if result is None:
            # repr() is the shortest text that reads back as the same float: the number the client wrote.
            exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
            result = integers[value] = to_unit_integer(exact, unit)
        return result

    for index, point in enumerate(points):
        if type(point) is not dict and not isinstance(point, dict):
            where = point_location(index)
            raise InvalidInput(f"{where} must be an object with lat and lon, not {_kind(point)}", where)
        if "ref" in point:
            ref = point["ref"]
            if not (ref is None or (type(ref) is str and len(ref) <= REF_MAX_LENGTH and ref.isprintable())):
                has_ref, ref = _check_ref(point, index)  # raises, or accepts a printable non-ASCII space
            has_ref = True
        else:
            has_ref, ref = False, None
        lat, lon = point.get("lat"), point.get("lon")
        # The common case in cheap tests; anything unusual gets the detailed checks.
        key = keys.get((lon, lat)) if type(lat) in _PLAIN and type(lon) in _PLAIN else _INVALID
        if key is None and -90 <= lat <= 90 and -180 <= lon <= 180:
            key = keys[(lon, lat)] = (to_integer(lon), to_integer(lat))
        if key is None or key is _INVALID:
            raise _coordinate_error(point, "lat", index, ref, has_ref) or _coordinate_error(
                point, "lon", index, ref, has_ref
            )
        append(_new_point(InputPoint, (key, has_ref, ref)))
    return parsed
