"""Compact JSON for every transport: no indentation, Japanese as UTF-8, Decimal as JSON numbers.

Agents pay per token: `ensure_ascii=False` and no pretty-printing cut a 100-row result to about a
third of the SDK's default text copy (measured, see DESIGN.md).
"""

from __future__ import annotations

import datetime
import json
import uuid
from decimal import Decimal
from typing import Any

from rest_framework.renderers import JSONRenderer


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


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_default)


def to_jsonable(value: Any) -> Any:
    """Plain JSON types only (for `structuredContent`, which the SDK validates with pydantic)."""
    return json.loads(dumps(value))


class CompactJSONRenderer(JSONRenderer):
    ensure_ascii = False
    compact = True

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        return dumps(data).encode()
