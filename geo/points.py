"""Input points: validation (seed 3.1 / 5.1) and the degrees -> integer conversion (seed 5.4).

The integer for GaluchatAPI is `round(degrees / unit)` with ties rounded half-up (away from zero), exactly, from
the shortest decimal text of the float the client sent. Float division alone gets boundary values wrong: 139.0005
/ 0.001 is 139000.49999999997 in binary. So the float quotient decides only where it is far from a tie; a value
within rounding error of one is converted in decimal arithmetic (`to_unit_integer`).

A request is checked column by column (every lat, then every lon, then every ref, each in a few C-level passes);
anything the columns do not clearly accept is walked again point by point (`_parse_located`), which raises the
first bad point's error naming its index and ref, or accepts what the columns' quick tests were unsure of.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from itertools import compress, repeat
from operator import contains, ge, itemgetter, methodcaller, mul, sub
from typing import Any, NamedTuple

from .errors import InvalidInput, point_location

REF_MAX_LENGTH = 128
_LIMITS = {"lat": 90, "lon": 180}
_PLAIN = (int, float)  # exact types: bool is a subclass of int and is refused
_INVALID = object()  # the marker of a point whose coordinates are not two plain numbers
# A float quotient this close (relative) to a tie may sit on the wrong side of it: far above the few ulps that
# the binary value of the input and one multiplication can be off by (about 4.4e-16 relative).
_TIE_MARGIN = 1e-12


class InputPoint(NamedTuple):
    """One validated point: its integer [lon, lat] for GaluchatAPI and its ref (when the input had one)."""

    key: tuple[int, int]
    has_ref: bool
    ref: str | None


@dataclass(frozen=True, slots=True)
class Points:
    """The validated points as columns, in input order: one list each, not one object per point (10,000 a call).

    Indexing and iterating give InputPoint rows.
    """

    keys: list[tuple[int, int]]
    has_refs: list[bool]
    refs: list[str | None]

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, index: int) -> InputPoint:
        return InputPoint(self.keys[index], self.has_refs[index], self.refs[index])

    def __iter__(self) -> Iterator[InputPoint]:
        return map(InputPoint._make, zip(self.keys, self.has_refs, self.refs, strict=True))


_lats, _lons, _ref, _ref_or_none = itemgetter("lat"), itemgetter("lon"), itemgetter("ref"), methodcaller("get", "ref")


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


def _exact(value: float | int) -> Decimal:
    # repr() is the shortest text that reads back as the same float: the number the client wrote.
    return Decimal(repr(value)) if type(value) is float else Decimal(value)


def unit_integers(values, unit: Decimal) -> dict[float | int, int]:
    """Each of `values` (finite numbers) -> `to_unit_integer` of it, with the float quotient where that cannot differ.

    Away from a tie, the float quotient (off from the exact one by a few ulps) has the same nearest integer; within
    `_TIE_MARGIN` of one, the decimal path decides: 139.0005 is 139000.49999999997 in floats, 139001 exactly.
    All in C-level passes but the decimal one (ties and near-ties only).
    """
    values = list(values)
    quotients = list(map(mul, values, repeat(float(1 / unit))))
    nearest = list(map(round, quotients))  # ties to even, but a tie never keeps this answer
    integers = dict(zip(values, nearest, strict=True))
    window = 0.5 - max(map(abs, quotients), default=0.0) * _TIE_MARGIN
    distances = map(abs, map(sub, quotients, nearest))
    for value in compress(values, map(ge, distances, repeat(window))):
        integers[value] = to_unit_integer(_exact(value), unit)
    return integers


def _plain_column(values: list[Any], limit: int) -> bool:
    """Every value an int or float (not bool) within -limit..limit and finite: in C-level passes over the column."""
    if not set(map(type, values)) <= {int, float}:
        return False
    # A NaN is skipped by min/max unless it comes first (then the comparison fails); sum() never skips it. Once
    # min and max are in range no int is too large to add up as a float.
    return -limit <= min(values) and max(values) <= limit and math.isfinite(sum(values))


def _parse_columns(points: list[Any], unit: Decimal) -> Points | None:
    """The points, when every one is plainly valid (checked a column at a time); None to have them walked one by one."""
    if not points:
        return Points([], [], [])
    if set(map(type, points)) != {dict}:
        return None
    try:
        lats, lons = list(map(_lats, points)), list(map(_lons, points))
    except KeyError:
        return None
    if not (_plain_column(lats, 90) and _plain_column(lons, 180)):
        return None
    try:
        refs, has_refs = list(map(_ref, points)), [True] * len(points)  # every point has a ref (or null)
    except KeyError:
        refs, has_refs = list(map(_ref_or_none, points)), list(map(contains, points, repeat("ref")))
    ref_kinds = set(map(type, refs))
    if not ref_kinds <= {str, type(None)}:
        return None
    texts = refs if ref_kinds == {str} else [ref for ref in refs if ref is not None]
    # isprintable() per character, so once over the joined text; a non-ASCII space is left to the walk.
    if texts and (max(map(len, texts)) > REF_MAX_LENGTH or not "".join(texts).isprintable()):
        return None
    # Each distinct coordinate converted once (1 and 1.0 are one key, and one integer).
    lon_integers, lat_integers = unit_integers(dict.fromkeys(lons), unit), unit_integers(dict.fromkeys(lats), unit)
    keys = list(zip(map(lon_integers.__getitem__, lons), map(lat_integers.__getitem__, lats), strict=True))
    return Points(keys, has_refs, refs)


def _parse_located(points: list[Any], unit: Decimal) -> Points:
    """Point by point in order, every coordinate in decimal arithmetic: the first bad point raises InvalidInput."""
    parsed = Points([], [], [])
    # A repeated (lon, lat) pair was validated and converted the first time it was seen; a hit skips both.
    # (1 and 1.0 are one key here, and convert to the same integer; NaN never equals itself, so never hits.)
    keys: dict[tuple[float | int, float | int], tuple[int, int]] = {}
    integers: dict[float | int, int] = {}  # a coordinate shared by distinct pairs is converted once

    def to_integer(value: float | int) -> int:
        result = integers.get(value)
        if result is None:
            result = integers[value] = to_unit_integer(_exact(value), unit)
        return result

    for index, point in enumerate(points):
        if type(point) is not dict and not isinstance(point, dict):
            where = point_location(index)
            raise InvalidInput(f"{where} must be an object with lat and lon, not {_kind(point)}", where)
        has_ref, ref = _check_ref(point, index)
        lat: Any = point.get("lat")  # whatever the JSON held: checked below
        lon: Any = point.get("lon")
        # The common case in cheap tests; anything unusual gets the detailed checks.
        key: object = keys.get((lon, lat)) if type(lat) in _PLAIN and type(lon) in _PLAIN else _INVALID
        if key is None and -90 <= lat <= 90 and -180 <= lon <= 180:
            key = keys[(lon, lat)] = (to_integer(lon), to_integer(lat))
        if key is None or key is _INVALID:
            error = _coordinate_error(point, "lat", index, ref, has_ref) or _coordinate_error(
                point, "lon", index, ref, has_ref
            )
            assert error is not None  # a point refused by the quick check has a coordinate the full check refuses
            raise error
        parsed.keys.append(key)  # type: ignore[arg-type]  # not None nor _INVALID: a pair of integers
        parsed.has_refs.append(has_ref)
        parsed.refs.append(ref)
    return parsed


def parse_points(points: list[Any], *, unit: Decimal, max_points: int) -> Points:
    """Validate every point in order; the first bad one raises InvalidInput naming its index and ref."""
    if len(points) > max_points:
        raise InvalidInput(f"{len(points)} points were sent; at most {max_points} are allowed per call", "points")
    parsed = _parse_columns(points, unit)
    return _parse_located(points, unit) if parsed is None else parsed
