"""Argument completion (`completion/complete`) for prompt and resource-template arguments.

An app attaches a `Completer` to an argument: a plain synchronous function that gets the text typed so far, the
other arguments already chosen and the call context, and returns candidate values from live data, best first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .registry import CallContext

# MCP caps one completion answer at 100 values.
MAX_VALUES = 100

Completer = Callable[[str, dict[str, str], CallContext], list[str]]


@dataclass(frozen=True, slots=True)
class Completion:
    values: list[str]
    total: int
    has_more: bool


def completion_run(completer: Completer | None, value: str, context: dict[str, str], ctx: CallContext) -> Completion:
    """The completer's candidates (none when the argument has no completer), cut to MCP's 100."""
    if completer is None:
        return Completion([], 0, False)
    values: list[Any] = completer(value, context, ctx)
    unique = list(dict.fromkeys(str(v) for v in values))
    return Completion(unique[:MAX_VALUES], len(unique), len(unique) > MAX_VALUES)
