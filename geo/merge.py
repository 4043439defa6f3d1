"""GaluchatAPI answers -> (code, address) per requested point (seed 5.7).

`{"addresses": {"<code>": {...}}, "aacodes"|"scodes": [<code|null>, ...]}`: admin and estat take the
list value as the code; jarl takes `addresses[k].code` (the JCC/JCG code). A null list value is a
point outside every area (code and address both null, not an error). Anything that does not fit
the contract raises `CoverageProblem` naming the position in the request.
"""

from __future__ import annotations

from typing import Any

Resolved = tuple[str | None, str | None]
NOT_FOUND: Resolved = (None, None)

LIST_KEYS = {"admin": "aacodes", "estat": "scodes", "jarl": "aacodes"}
ADDRESS_PARTS = {"admin": ("prefecture", "city"), "estat": ("prefecture", "city", "s_area")}


class CoverageProblem(Exception):
    """The answer does not match the request; `position` is the point's index in the request (or None)."""

    def __init__(self, reason: str, position: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.position = position


def _code_key(value: Any) -> str | None:
    """The addresses key for a list value: integers (the documented type) or digit strings."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.isdigit():
        return value
    return None


def _place_name(entry: dict, granularity: str) -> str | None:
    parts = []
    for field in ADDRESS_PARTS[granularity]:
        part = entry.get(field)
        if part is None:
            continue
        if not isinstance(part, str):
            return None
        parts.append(part)
    return "".join(parts) or None


def _resolve_entry(entry: Any, key: str, granularity: str, position: int) -> Resolved:
    if not isinstance(entry, dict):
        raise CoverageProblem(f"code {key} is missing from addresses", position)
    if granularity == "jarl":
        jcc, name = entry.get("code"), entry.get("name")
        if jcc is None:
            return NOT_FOUND  # an area without a JCC/JCG code
        if isinstance(jcc, bool) or not isinstance(jcc, str | int) or not isinstance(name, str) or not name:
            raise CoverageProblem(f"addresses[{key}] has no usable code and name", position)
        return str(jcc), name
    address = _place_name(entry, granularity)
    if address is None:
        raise CoverageProblem(f"addresses[{key}] has no usable place name", position)
    return key, address


def merge(payload: Any, granularity: str, count: int) -> list[Resolved]:
    """One (code, address) per requested point, in request order."""
    list_key = LIST_KEYS[granularity]
    if not isinstance(payload, dict) or not isinstance(payload.get(list_key), list):
        raise CoverageProblem(f"the answer has no {list_key} list")
    codes = payload[list_key]
    addresses = payload.get("addresses")
    if addresses is None:
        addresses = {}
    if not isinstance(addresses, dict):
        raise CoverageProblem("the answer's addresses is not an object")
    if len(codes) < count:
        raise CoverageProblem(f"the answer has {len(codes)} {list_key} for {count} points", len(codes))
    if len(codes) > count:
        raise CoverageProblem(f"the answer has {len(codes)} {list_key} for {count} points")
    resolved: list[Resolved] = []
    seen: dict[str, Resolved] = {}
    for position, value in enumerate(codes):
        if value is None:
            resolved.append(NOT_FOUND)
            continue
        key = _code_key(value)
        if key is None:
            raise CoverageProblem(f"{list_key}[{position}] is {value!r}, not a code", position)
        hit = seen.get(key)
        if hit is None:
            hit = seen[key] = _resolve_entry(addresses.get(key), key, granularity, position)
        resolved.append(hit)
    return resolved
