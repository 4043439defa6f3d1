"""Comparing a live result with a seed's sample: same fields, same JSON types, only documented differences."""

from __future__ import annotations

from typing import Any


def json_type(value: Any, *, integers: bool = False) -> str:
    """The JSON type of a value; with `integers`, 1980 and 1980.0 differ (integer / number)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "integer" if integers and isinstance(value, int) else "number"
    return {str: "string", type(None): "null", list: "array", dict: "object"}[type(value)]


def assert_shape(
    seed: Any,
    actual: Any,
    *,
    extras: set[str] | frozenset[str] = frozenset(),
    missing_ok: set[str] | frozenset[str] = frozenset(),
    integers: bool = False,
    path: str = "$",
) -> None:
    """`actual` has every field of the seed sample with the same JSON type and no other fields, except the
    documented `extras` and `missing_ok` paths (like `$.journalEntry.lines[].id`)."""
    ours, theirs = json_type(actual, integers=integers), json_type(seed, integers=integers)
    assert ours == theirs, f"{path}: {ours} where the seed has {theirs}"
    if isinstance(seed, dict):
        missing = {f"{path}.{k}" for k in seed.keys() - actual.keys()} - set(missing_ok)
        assert not missing, f"missing {sorted(missing)}"
        extra = {f"{path}.{k}" for k in actual.keys() - seed.keys()} - set(extras)
        assert not extra, f"undocumented fields {sorted(extra)}"
        for key in seed.keys() & actual.keys():
            assert_shape(
                seed[key], actual[key], extras=extras, missing_ok=missing_ok, integers=integers, path=f"{path}.{key}"
            )
    elif isinstance(seed, list) and seed:
        assert actual, f"{path}: empty where the seed shows items"
        for item in actual:
            assert_shape(seed[0], item, extras=extras, missing_ok=missing_ok, integers=integers, path=f"{path}[]")
