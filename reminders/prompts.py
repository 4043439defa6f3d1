"""MCP prompts of the reminders group: setting up a repeating reminder."""

from __future__ import annotations

from mcpsite.mcp.prompts import PromptArgument, prompt
from mcpsite.mcp.registry import CallContext

from .schedule import REPEAT_WORDS

# Beyond the words, the RRULE forms people ask for most; reminder.create accepts any RFC 5545 rule.
REPEAT_EXAMPLES = [
    *REPEAT_WORDS,
    *("毎日", "毎週", "毎週月曜", "平日", "毎月", "毎年"),
    "FREQ=WEEKLY;BYDAY=MO,WE,FR",
    "FREQ=MONTHLY;BYMONTHDAY=-1",
    "FREQ=HOURLY;INTERVAL=2",
]


def complete_repeat(value: str, context: dict[str, str], ctx: CallContext) -> list[str]:
    """The repeat words and common RRULEs that start with what was typed (case-insensitive)."""
    typed = value.strip().upper()
    return [r for r in REPEAT_EXAMPLES if r.upper().startswith(typed)]


@prompt(
    name="repeating_reminder",
    title="繰り返しリマインダーを設定する",
    description="内容・最初の時刻・繰り返しから reminder.create で繰り返しリマインダーを作る手順。",
    arguments=[
        PromptArgument("note", "リマインダーの内容 (例: 薬を飲む)"),
        PromptArgument("first_time", "最初の通知時刻 (ISO 8601、例: 2026-12-01T07:30、オフセットなしは Asia/Tokyo)"),
        PromptArgument("repeat", f"繰り返し ({' / '.join(REPEAT_WORDS)} または RRULE)", complete=complete_repeat),
    ],
)
def repeating_reminder(args: dict[str, str]) -> str:
    return (
        f"「{args['note']}」のリマインダーを {args['first_time']} から {args['repeat']} で繰り返し設定してください。\n"
        "1. 時刻が未来で、繰り返しが意図どおりか (例: weekdays は月〜金、FREQ=MONTHLY;BYMONTHDAY=-1 は毎月末) を"
        "私に一言で確認する。\n"
        f"2. reminder.create を time={args['first_time']}、note={args['note']}、repeat={args['repeat']} で呼ぶ。\n"
        '3. {"status": "error"} なら error の内容に沿って time か repeat を直して 2 をやり直す。\n'
        "4. 返ってきた id (rem_…) を伝え、予定表に入れたいときは calendar.create が使えることを添える。"
    )
