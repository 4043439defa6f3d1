"""Compact JSON for every transport: no indentation, Japanese as UTF-8, Decimal as JSON numbers.

Agents pay per token: `ensure_ascii=False` and no pretty-printing cut a 100-row result to about a
third of the SDK's default text copy (DESIGN.md).

orjson writes exactly that (compact, UTF-8) several times faster than the stdlib encoder. A tool result is encoded
once, by the transport: `to_jsonable` hands plain JSON back as it is and round-trips only what is not (Decimals,
dates, tuples…): a round trip of every result would be a fifth of geo's 10,000-point call.
Dates, times and Decimals still go through `_default`, so the text is what the stdlib path wrote (floats with tiny
exponents aside: 1e-7, not 1e-07, the same number); what orjson refuses (integers beyond 64 bits, lone
surrogates) falls back to the stdlib encoder.
"""

from __future__ import annotations

import datetime
import json
import math
import uuid
from collections.abc import Mapping
from decimal import Decimal
from itertools import chain
from typing import Any

import orjson
from rest_framework.renderers import JSONRenderer

# Non-string keys become strings as in the stdlib; dates and times go to _default (isoformat, as before).
_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME


def number(value: Decimal) -> int | float:
    """A Decimal as a JSON number: an integer when whole (as the seeds show), else the shortest float.

    Amounts carry at most a few decimal places, which a float's shortest repr reproduces exactly.
    """
    if value == value.to_integral_value():
        return int(value)
    return float(value)


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return number(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _stdlib_dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_default)


def dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, default=_default, option=_ORJSON_OPTIONS).decode()
    except orjson.JSONEncodeError:
        # orjson's limits, not JSON's; the stdlib raises the same TypeError for what is truly not JSON.
        return _stdlib_dumps(value)


_PLAIN_TYPES = frozenset({dict, list, str, int, float, bool, type(None)})
# orjson refuses deeper values; those keep the round trip below, and so its errors.
_MAX_DEPTH = 255


def _is_plain_json(value: Any) -> bool:
    """Whether `value` is already what the round trip in `to_jsonable` would give an equal copy of: a tree of dicts
    with str keys, lists, str, int, bool, None and finite floats (exact types), each container met once.

    Checked a level at a time in C-level passes (types of a whole level at once), not a call per value: geo's
    10,000 result rows are three levels. Anything else (tuples, Decimals, subclasses, NaN, a container shared
    or in a cycle, nesting past orjson's depth) answers False.
    """
    level = [value]
    seen: set[int] = set()
    for _depth in range(_MAX_DEPTH):
        kinds = set(map(type, level))
        if not kinds <= _PLAIN_TYPES:
            return False
        # A NaN or infinity makes the sum non-finite (so would an overflow: the round trip decides then).
        if float in kinds and not math.isfinite(sum(item for item in level if type(item) is float)):
            return False
        dicts = level if kinds == {dict} else [item for item in level if type(item) is dict] if dict in kinds else []
        lists = level if kinds == {list} else [item for item in level if type(item) is list] if list in kinds else []
        if not dicts and not lists:
            return True
        before = len(seen)
        seen.update(map(id, dicts), map(id, lists))
        if len(seen) != before + len(dicts) + len(lists):
            return False  # shared or cyclic: the round trip copies (or refuses) as before
        if dicts and not set(map(type, chain.from_iterable(dicts))) <= {str}:
            return False
        level = [*chain.from_iterable(map(dict.values, dicts)), *chain.from_iterable(lists)]
    return False


def to_jsonable(value: Any) -> Any:
    """Plain JSON types only (for `structuredContent`, which the SDK validates with pydantic).

    A value that is plain JSON already is returned as it is, the same object, not a copy (a round trip of geo's
    10,000-point results through orjson costs more than checking them). So a caller must not mutate what it passed
    in or got back while the other side still uses it (none does).
    """
    return value if _is_plain_json(value) else _round_trip(value)


def _round_trip(value: Any) -> Any:
    try:
        return orjson.loads(orjson.dumps(value, default=_default, option=_ORJSON_OPTIONS))
    except orjson.JSONEncodeError:
        return json.loads(_stdlib_dumps(value))


class CompactJSONRenderer(JSONRenderer):
    ensure_ascii = False
    compact = True

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Mapping[str, Any] | None = None
    ) -> bytes:
        if data is None:
            return b""
        return dumps(data).encode()
