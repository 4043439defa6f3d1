"""Compact JSON for every transport: no indentation, Japanese as UTF-8, Decimal as JSON numbers.

Agents pay per token: `ensure_ascii=False` and no pretty-printing cut a 100-row result to about a
third of the SDK's default text copy (measured, see DESIGN.md).

orjson writes exactly that (compact, UTF-8) several times faster than the stdlib encoder: every tool result
is encoded at least twice (`to_jsonable`, then the transport), which was a fifth of geo's 10,000-point call
(bench/bench_geo.py). Dates, times and Decimals still go through `_default`, so the text is what the stdlib
path wrote (floats with tiny exponents aside: 1e-7, not 1e-07, the same number); what orjson refuses (integers
beyond 64 bits, lone surrogates) falls back to the stdlib encoder.
"""

from __future__ import annotations

import datetime
import json
import uuid
from decimal import Decimal
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


def to_jsonable(value: Any) -> Any:
    """Plain JSON types only (for `structuredContent`, which the SDK validates with pydantic)."""
    try:
        return orjson.loads(orjson.dumps(value, default=_default, option=_ORJSON_OPTIONS))
    except orjson.JSONEncodeError:
        return json.loads(_stdlib_dumps(value))


class CompactJSONRenderer(JSONRenderer):
    ensure_ascii = False
    compact = True

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        return dumps(data).encode()
