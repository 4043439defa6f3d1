"""MCP prompts of the cinema group: booking seats for a film."""

from __future__ import annotations

from mcpsite.mcp.prompts import PromptArgument, prompt
from mcpsite.mcp.registry import CallContext

from . import selectors

COMPLETIONS = 20


def complete_title(value: str, context: dict[str, str], ctx: CallContext) -> list[str]:
    """Film titles matching what was typed, with get_movie_list's 表記揺れ tolerance (ｽﾀｰﾑｰﾋﾞｰ → スター・ムービー)."""
    return selectors.movie_titles_matching(query=value, limit=COMPLETIONS)


@prompt(
    name="book_seats_for_film",
    title="映画の座席を予約する",
    description="作品名から上映回を選び、空席を確認して座席を予約する手順。",
    arguments=[
        PromptArgument("title", "作品名 (表記揺れ可: 全角/半角、ひらがな/カタカナ)", complete=complete_title),
        PromptArgument("date", "希望日 (YYYY-MM-DD、省略時は本日以降7日間)", required=False),
        PromptArgument("count", "必要な席数 (並び席、省略時は 1)", required=False),
    ],
)
def book_seats_for_film(args: dict[str, str]) -> str:
    date = args.get("date")
    count = args.get("count") or "1"
    when = f"{date} の" if date else "本日以降7日間の"
    return (
        f"映画「{args['title']}」の座席を {count} 席予約したい。次の手順で進めてください。\n"
        f"1. get_movie_list で query に作品名を渡し{f'、date に {date} を渡し' if date else ''}、movie_id を確かめる"
        "（候補が複数なら私に選ばせる）。\n"
        f"2. get_show_schedule で {when}上映回を取得し、available_seats_count が {count} 以上の回を示して"
        "選んでもらう。\n"
        f"3. suggest_seats（schedule_id と count={count}）で並びの空席を提案し、"
        "必要なら get_seat_availability で座席表を見せる。\n"
        "4. 席が決まったら予約用のパスワード（6文字以上）を私に尋ね、reserve_seats で予約する。"
        "409 (Seat conflict) なら conflicted_seats を避けて 3 からやり直す。\n"
        "5. 予約番号 (reservation_id) と席を伝え、確認には get_reservation_details が使えることを添える。"
    )
