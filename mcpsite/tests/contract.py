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


def keys_the_schema_does_not_require(schema: dict, sample: Any, *, optional: frozenset[str] = frozenset()) -> list[str]:
    """Paths of the sample's keys (`$.accounts[].code`) whose removal the output schema still accepts.

    An output schema that does not require the seed's keys accepts a result that lost them, so a seed-example test
    validating against it could never fail. Lists are checked through their first item."""
    import copy

    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    validator.validate(sample)
    found: list[str] = []

    def walk(node: Any, steps: tuple, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                here = f"{path}.{key}"
                if here not in optional:
                    pruned = copy.deepcopy(sample)
                    parent = pruned
                    for step in steps:
                        parent = parent[step]
                    del parent[key]
                    if validator.is_valid(pruned):
                        found.append(here)
                walk(value, (*steps, key), here)
        elif isinstance(node, list) and node:
            walk(node[0], (*steps, 0), f"{path}[]")

    walk(sample, (), "$")
    return found
