"""A tool call's arguments checked against its input schema, with messages that never echo a value (it may be a
password), and refused where JSON allows what no tool can store (NaN, NUL, lone surrogates)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from mcpsite.core.errors import InvalidParams

from .registry import ToolSpec


def _schema_message(error) -> str:
    """A specific message that never echoes the offending value (it may be a password)."""
    expected = error.validator_value
    if error.validator == "required":
        return error.message  # names the missing property only
    if error.validator == "type":
        types = expected if isinstance(expected, list) else [expected]
        return f"must be of type {' or '.join(types)}"
    if error.validator == "enum":
        return f"must be one of {', '.join(map(str, expected))}"
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"unexpected properties: {', '.join(extra)}"
    if error.validator == "uniqueItems":
        return "items must be unique"
    readable = {
        "minimum": "must be at least", "maximum": "must be at most",
        "exclusiveMinimum": "must be greater than", "exclusiveMaximum": "must be less than",
        "minLength": "length must be at least", "maxLength": "length must be at most",
        "minItems": "must have at least this many items:", "maxItems": "must have at most this many items:",
        "pattern": "must match the pattern", "format": "must be in format",
    }  # fmt: skip
    if error.validator in readable:
        return f"{readable[error.validator]} {expected}"
    return f"fails the schema rule '{error.validator}'"


def _path_order(error) -> list[tuple[bool, int | str]]:
    # Array indexes (int) and property names (str) never compare directly.
    return [(isinstance(part, str), part) for part in error.path]


def _location(path) -> str:
    # Keys come from the caller: a lone surrogate in one would make the answer itself unencodable.
    parts = (f"[{p}]" if isinstance(p, int) else "." + p.encode(errors="backslashreplace").decode() for p in path)
    return "".join(parts).lstrip(".")


def _refuse(path, message: str):
    where = _location(path)
    # The seeds' pattern: a short title in `message`, the specific refusal in `data`.
    return InvalidParams(data=f"{where}: {message}" if where else message)


def _check_values(value: Any, path: list) -> bool:
    """Refuse what JSON allows but no tool can store: NaN/Infinity, NUL and lone surrogates in strings.

    Returns whether the value holds a float (only then is the integral-float pass needed). The walk keeps no path
    (building one per value would cost more than the walk on a 10,000-point resolve_points): only a refused value
    is walked again, to name where it is.
    """
    if type(value) not in (dict, list):
        return _check_located(value, path)
    has_float = False
    pending: list[dict | list] = [value]  # containers only: a scalar is checked where it is found
    keys_seen: set[str] = set()  # objects in an array repeat their keys: each is checked once
    while pending:
        container = pending.pop()
        items: Iterable[Any]
        if type(container) is dict:
            if not _keys_storable(container, keys_seen):
                _locate_refusal(value, path)
            items = container.values()
        else:
            items = container
        for item in items:
            kind = type(item)
            if kind is str:
                if not _text_storable(item):
                    _locate_refusal(value, path)
            elif kind is float:
                has_float = True
                if not math.isfinite(item):
                    _locate_refusal(value, path)
            elif kind is dict or kind is list:
                pending.append(item)
            elif kind is not int and kind is not bool and item is not None:
                has_float |= _check_located(item, path)  # not what a JSON decoder makes: the thorough walk decides
    return has_float


def _keys_storable(container: dict, keys_seen: set[str]) -> bool:
    """Whether an object's keys not seen before are all storable text (each is then remembered)."""
    for key in container:
        if key not in keys_seen:
            if type(key) is not str or not _text_storable(key):
                return False
            keys_seen.add(key)
    return True


def _text_storable(text: str) -> bool:
    return "\x00" not in text and (text.isascii() or _encodable(text))


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _locate_refusal(value: Any, path: list) -> None:
    """Raise the refusal of the first bad value in `value`, named by its location."""
    _check_located(value, path)
    raise AssertionError("a value was refused, but the located walk found nothing to refuse")


def _check_located(value: Any, path: list) -> bool:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _refuse(path, "must be a finite number")
        return True
    if isinstance(value, str):
        _check_text(value, path)
        return False
    has_float = False
    if isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, [*path, key])
            has_float |= _check_located(item, [*path, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            has_float |= _check_located(item, [*path, index])
    return has_float


def _check_text(text: str, path: list) -> None:
    if "\x00" in text:
        raise _refuse(path, "must not contain NUL characters")
    if not (text.isascii() or _encodable(text)):
        raise _refuse(path, "must be valid Unicode (no lone surrogates)")


def _set_at(container: Any, path, value: Any) -> None:
    *parents, last = path
    for part in parents:
        container = container[part]
    container[last] = value


def validate_arguments(spec: ToolSpec, arguments: Any) -> dict[str, Any]:
    """The arguments, checked against the tool's schema; integers arrive as `int` (never `5.0`)."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidParams(data="Arguments must be a JSON object")
    has_float = _check_values(arguments, [])
    error = min(spec.validator.iter_errors(arguments), key=_path_order, default=None)
    if error is not None:
        raise _refuse(error.absolute_path, _schema_message(error))
    if has_float:
        for error in list(spec.strict_validator.iter_errors(arguments)):
            if error.validator == "type" and isinstance(error.instance, float) and error.instance.is_integer():
                if not error.absolute_path:
                    continue  # the arguments object itself is never a number
                _set_at(arguments, error.absolute_path, int(error.instance))
    return arguments
