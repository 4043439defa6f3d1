"""message.send asks the user before sending when the client can answer (MCP elicitation), through the official
client; plus the calendar resource, the repeating-reminder prompt and its completion."""

from __future__ import annotations

import mcp_types as types
import pytest

from reminders.models import Message

pytestmark = pytest.mark.django_db(transaction=True)

SEND = {"to": "山田花子", "text": "今から向かいます"}


def _elicitation(answer: types.ElicitResult, asked: list):
    async def callback(context, params):
        asked.append(params)
        return answer

    return callback


def _send(mcp_run, api_key, **client_options):
    key, _raw = api_key

    async def scenario(client):
        return await client.call_tool("message.send", SEND)

    result = mcp_run(scenario, api_key=key, **client_options)
    return result.structured_content, result.is_error


def test_accepted_confirmation_sends_and_shows_recipient_address_and_text(mcp_run, api_key, contacts):
    asked = []
    answer = types.ElicitResult(action="accept", content={"confirm": True})
    result, is_error = _send(mcp_run, api_key, elicitation_callback=_elicitation(answer, asked))
    assert result["status"] == "ok" and not is_error
    assert Message.objects.get(public_id=result["id"]).contact == contacts["hanako"]
    (question,) = asked
    assert "山田花子" in question.message and "hanako@example.com" in question.message
    assert "今から向かいます" in question.message
    assert question.requested_schema["properties"]["confirm"]["type"] == "boolean"


@pytest.mark.parametrize(
    ("answer", "verb"),
    [
        (types.ElicitResult(action="decline"), "declined"),
        (types.ElicitResult(action="cancel"), "cancelled"),
        (types.ElicitResult(action="accept", content={"confirm": False}), "declined"),
    ],
)
def test_a_declined_or_cancelled_confirmation_sends_nothing(mcp_run, api_key, contacts, answer, verb):
    asked = []
    result, is_error = _send(mcp_run, api_key, elicitation_callback=_elicitation(answer, asked))
    assert result == {"status": "error", "error": f"Not sent: the user {verb} sending this message to 山田花子"}
    assert is_error
    assert len(asked) == 1
    assert not Message.objects.exists()


def test_a_client_without_elicitation_gets_the_seeds_behaviour(mcp_run, api_key, contacts):
    result, is_error = _send(mcp_run, api_key)  # no elicitation_callback: the capability is not declared
    assert result["status"] == "ok" and not is_error
    assert Message.objects.get(public_id=result["id"]).text == "今から向かいます"


def test_bad_input_is_refused_before_anyone_is_asked(mcp_run, api_key, contacts):
    asked = []
    key, _raw = api_key

    async def scenario(client):
        return await client.call_tool("message.send", {"to": "誰でもない人", "text": "x"})

    answer = types.ElicitResult(action="accept", content={"confirm": True})
    result = mcp_run(scenario, api_key=key, elicitation_callback=_elicitation(answer, asked))
    assert result.structured_content["status"] == "error" and "No contact matches" in result.structured_content["error"]
    assert asked == [] and not Message.objects.exists()


def test_calendar_resource_is_the_callers_icalendar_with_repeats(mcp_run, api_key, call_tool):
    assert (
        call_tool("reminder.create", {"time": "2099-12-01T07:30", "note": "薬を飲む", "repeat": "weekdays"})["status"]
        == "ok"
    )
    key, _raw = api_key

    async def scenario(client):
        return (await client.read_resource("mcpsite://reminders/calendar.ics")).contents[0]

    contents = mcp_run(scenario, api_key=key)
    assert contents.mime_type == "text/calendar"
    assert contents.text.startswith("BEGIN:VCALENDAR")
    assert "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR" in contents.text and "薬を飲む" in contents.text


def test_calendar_without_an_owner_is_a_specific_error(mcp_run):
    from mcp.shared.exceptions import MCPError

    async def scenario(client):
        with pytest.raises(MCPError) as excinfo:
            await client.read_resource("mcpsite://reminders/calendar.ics")
        return excinfo.value

    assert "An owner is required" in mcp_run(scenario).error.message


def test_repeating_reminder_prompt_renders_and_repeat_completes(mcp_run):
    from mcp_types import PromptReference

    async def scenario(client):
        prompt = await client.get_prompt(
            "repeating_reminder", {"note": "薬を飲む", "first_time": "2026-12-01T07:30", "repeat": "weekdays"}
        )
        reference = PromptReference(name="repeating_reminder")
        completed = await client.complete(reference, {"name": "repeat", "value": "w"})
        described = {p.name: p for p in (await client.list_prompts()).prompts}["repeating_reminder"]
        words = [(await client.complete(reference, {"name": "repeat", "value": v})).completion.values for v in "hy"]
        return prompt.messages[0].content.text, completed.completion.values, described, words

    text, values, described, words = mcp_run(scenario)
    assert "reminder.create を time=2026-12-01T07:30、note=薬を飲む、repeat=weekdays で呼ぶ" in text
    assert values == ["weekly", "weekdays"]
    assert words == [["hourly"], ["yearly"]]  # every word reminder.create accepts
    repeat = next(argument for argument in described.arguments if argument.name == "repeat")
    assert "hourly / daily / weekly / weekdays / monthly / yearly" in repeat.description
