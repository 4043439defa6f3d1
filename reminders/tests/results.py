"""The seed's result shape for every reminders tool: {"status": "ok", "id": ...} or {"status": "error", "error": ...}
(asserted once here for every test module)."""

from __future__ import annotations

from jsonschema import Draft202012Validator

SEED_RESPONSE = {
    "type": "object",
    "properties": {
        "status": {"enum": ["ok", "error"]},
        "id": {"type": "string"},
        "error": {"type": "string"},
    },
    "required": ["status"],
    "additionalProperties": False,
}


def assert_ok(result: dict, prefix: str) -> str:
    """`result` is a success whose id starts with `prefix`; returns the id."""
    Draft202012Validator(SEED_RESPONSE).validate(result)
    assert set(result) == {"status", "id"} and result["status"] == "ok", result
    assert result["id"].startswith(prefix), result
    return result["id"]


def assert_error(result: dict) -> str:
    """`result` is an error with a message; returns the message."""
    Draft202012Validator(SEED_RESPONSE).validate(result)
    assert set(result) == {"status", "error"} and result["status"] == "error" and result["error"], result
    return result["error"]
