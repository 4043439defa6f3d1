"""Arguments as the dispatcher hands them to every tool: validated, integral numbers as `int`, and nothing a
column cannot store (too-large integers, NaN, NUL, lone surrogates) gets past it; each refusal names the field."""

import re

import pytest

from mcpsite.core.errors import InvalidParams
from mcpsite.mcp import registry
from mcpsite.mcp.arguments import validate_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "limit": {"type": "integer"},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "plan": {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "object", "properties": {"qty": {"type": "integer"}}}}
            },
        },
        "ratio": {"type": "number"},
        "name": {"type": "string"},
    },
}
SPEC = registry.ToolSpec("test_args", "cinema", "arguments", SCHEMA, lambda args, ctx: args)


def validated(arguments):
    return validate_arguments(SPEC, arguments)


def test_integral_floats_reach_the_tool_as_int():
    args = validated({"limit": 5.0, "ids": [1.0, 2], "plan": {"items": [{"qty": 3.0}]}, "ratio": 2.0})
    assert args == {"limit": 5, "ids": [1, 2], "plan": {"items": [{"qty": 3}]}, "ratio": 2.0}
    assert type(args["limit"]) is int and type(args["ids"][0]) is int and type(args["plan"]["items"][0]["qty"]) is int
    assert type(args["ratio"]) is float  # a number stays a number


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"limit": 1e308}, "limit: must be at most 9223372036854775807"),
        ({"limit": -(2**70)}, "limit: must be at least -9223372036854775808"),
        ({"ids": [1, 2**64]}, r"ids\[1\]: must be at most"),
        ({"plan": {"items": [{"qty": 1e19}]}}, r"plan.items\[0\].qty: must be at most"),
        ({"ratio": float("nan")}, "ratio: must be a finite number"),
        ({"ratio": float("inf")}, "ratio: must be a finite number"),
        ({"name": "a\x00b"}, "name: must not contain NUL characters"),
        ({"name": "\ud800"}, r"name: must be valid Unicode"),
        ({"other\x00": 1}, "must not contain NUL characters"),
        ({"\ud800": 1}, r"^\\ud800: must be valid Unicode"),  # the location itself stays encodable
        ({"limit": 1.5}, "limit: must be of type integer"),
        # Deep in arrays of objects (the walk that finds them keeps no path; the refusal still names it):
        ({"plan": {"items": [{"qty": 1}, {"qty": 2, "note": "a\x00"}]}}, r"plan.items\[1\].note: must not contain NUL"),
        ({"ids": [1, float("nan")]}, r"ids\[1\]: must be a finite number"),
        ({"plan": {"items": [{"qty": 1}, {"q\ud800": 2}]}}, r"plan.items\[1\].q\\ud800: must be valid Unicode"),
    ],
)
def test_values_no_column_can_hold_are_refused_with_their_location(arguments, message):
    with pytest.raises(InvalidParams) as refused:
        validated(arguments)
    assert refused.value.message == "Invalid params"  # the seeds' pattern: the detail in `data`
    assert re.search(message, refused.value.detail), refused.value.detail
