"""The validators tool arguments go through: JSON Schema 2020-12 with two additions for real columns.

- Every integer must fit a BIGINT (the widest column here): a larger one is refused with its location
  instead of crashing the database driver.
- `StrictIntegerValidator` does not count integral floats (5.0, 1e308) as integers, so the dispatcher
  can find them in valid arguments and hand them to the tool as `int`.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators

_JSON_SCHEMA_TYPE = Draft202012Validator.VALIDATORS["type"]

# The widest integer any column here stores (BIGINT); larger ones crash SQLite and mean nothing to a tool.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _integer_type(validator, types, instance, schema):
    """JSON Schema's `type`, plus a range every integer must fit: a too-large value is a -32602, not a crash."""
    yield from _JSON_SCHEMA_TYPE(validator, types, instance, schema)
    wanted = types if isinstance(types, list) else [types]
    if "integer" in wanted and validator.is_type(instance, "integer"):
        if instance > INT64_MAX:
            yield ValidationError("too large", validator="maximum", validator_value=INT64_MAX)
        elif instance < INT64_MIN:
            yield ValidationError("too small", validator="minimum", validator_value=INT64_MIN)


def _is_strict_integer(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


StrictIntegerValidator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer),
)
ArgumentValidator = validators.extend(Draft202012Validator, validators={"type": _integer_type})


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` or null, in the form strict structured-output dialects accept (`anyOf` with a `null` branch; a
    `type` list such as `["string", "null"]` is refused by several; docs/add-a-tool.md)."""
    return {"anyOf": [schema, {"type": "null"}]}
