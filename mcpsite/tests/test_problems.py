"""Every app's system check is a list of `Problem`s turned into Django's messages by one function."""

from __future__ import annotations

import pytest
from django.core import checks

from mcpsite.core.problems import Problem, check_messages

# problem, Django's message class, hint it carries
TABLE = [
    (Problem("app.E001", "X is wrong"), checks.Error, None),
    (Problem("app.E002", "Y is wrong", hint="Set Y."), checks.Error, "Set Y."),
    (Problem("app.W001", "Z is risky", warning=True), checks.Warning, None),
    (
        Problem("app.W002", "Z is risky", hint="Only in development.", warning=True),
        checks.Warning,
        "Only in development.",
    ),
]


@pytest.mark.parametrize(("problem", "kind", "hint"), TABLE)
def test_a_problem_becomes_its_check_message(problem, kind, hint):
    (message,) = check_messages([problem])
    assert type(message) is kind
    assert (message.id, message.msg, message.hint) == (problem.id, problem.message, hint)


@pytest.mark.parametrize(
    ("module", "setting", "value", "expected_id"),
    [
        ("mcpsite.checks", "MCP_DEFAULT_RATE", "fast", "mcpsite.E001"),
        ("mcpsite.checks", "MCP_REQUEST_STATE_TTL", 0, "mcpsite.E005"),
        ("cinema.checks", "CINEMA_PASSWORD_RATE", "0/m", "cinema.E002"),
        ("merchant.checks", "TAX_RATE", 5, "merchant.E005"),
        ("reminders.checks", "SITE_URL", "example.com", "reminders.E004"),
    ],
)
def test_each_app_lists_its_problems(settings, module, setting, value, expected_id):
    import importlib

    setattr(settings, setting, value)
    assert [p.id for p in importlib.import_module(module).settings_problems()] == [expected_id]
