"""Throwaway tools that exercise the transports (test-only; never registered by the product)."""

from mcpsite.core.errors import ApplicationError, Conflict, RateLimited
from mcpsite.mcp import content
from mcpsite.mcp.content import Content
from mcpsite.mcp.registry import ToolSpec, register, unregister

ECHO_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "テキスト"},
        "count": {"type": "integer", "minimum": 1},
    },
    "required": ["text"],
}


def _echo(args, ctx):
    return {"echo": args["text"] * args.get("count", 1), "transport": ctx.transport}


def _conflict(args, ctx):
    raise Conflict("Seat conflict", data={"conflicted_seats": ["A3"], "message": "Seat A3 is already reserved"})


def _boom(args, ctx):
    raise RuntimeError("secret internals")


def _throttled(args, ctx):
    # A limit of the tool's own (like cinema's wrong-password throttle), not the API key's rate.
    raise RateLimited(data="Too many attempts on this resource")


def _values(args, ctx):
    # What JSON encoders write differently if they can: floats, escapes, non-ASCII text, nesting.
    return {"floats": [0.1, 1e21, 1e-7, -0.0, 3.0, 123456.789], "ints": [0, -1, 2**63 - 1],
            "text": "映画 \u2028 \x01 \x7f \" \\ /", "nested": {"a": [None, True, False, {}]}}  # fmt: skip


def _blocks(args, ctx):
    return Content((content.text("3 seats"),), structured={"seats": 3})


def _inband(args, ctx):
    raise ApplicationError("bad thing")


SPECS = [
    ToolSpec("test_echo", "cinema", "Echo text", ECHO_SCHEMA, _echo),
    ToolSpec("test_conflict", "cinema", "Always conflicts", {"type": "object"}, _conflict),
    ToolSpec("test_boom", "cinema", "Always crashes", {"type": "object"}, _boom),
    ToolSpec("test_throttled", "cinema", "Always throttled", {"type": "object"}, _throttled),
    ToolSpec("test_values", "cinema", "JSON values", {"type": "object"}, _values),
    ToolSpec("test_content_blocks", "cinema", "Content blocks", {"type": "object"}, _blocks),
    ToolSpec(
        "test_inband",
        "reminders",
        "Errors in band",
        {"type": "object"},
        _inband,
        render_error=lambda e: {"status": "error", "error": e.message},
    ),
]


def install():
    for spec in SPECS:
        register(spec)


def uninstall():
    for spec in SPECS:
        unregister(spec.name)
