"""The prompt registry: each app declares its reusable workflows once, in `<app>/prompts.py`.

A prompt belongs to a tool group (a key sees the prompts of the groups it may use), names its arguments (each
optionally completed from live data) and renders to one user message from the arguments: its text, or a list of
content blocks (`content.py`: an image, an embedded resource, ...), one user message each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mcpsite.core.scopes import module_tool_group, tool_group_validate

from .completion import Completer
from .content import Block


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str
    required: bool = True
    complete: Completer | None = None


@dataclass(frozen=True)
class PromptSpec:
    name: str
    group: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...]
    # render(arguments), or render(arguments, ctx) with `with_context`: a prompt that may ask the client first
    # (ctx.interaction, e.g. raising InputRequired on 2026-07-28).
    render: Callable[..., str | list[Block]]
    with_context: bool = False

    def argument(self, name: str) -> PromptArgument | None:
        return next((a for a in self.arguments if a.name == name), None)


_prompts: dict[str, PromptSpec] = {}


def prompt(
    *,
    name: str,
    group: str | None = None,
    title: str,
    description: str,
    arguments: Iterable[PromptArgument] = (),
    with_context: bool = False,
):
    """Register the decorated `render(arguments) -> str | list[Block]` as the prompt `name` (`render(arguments,
    ctx)` with `with_context`)."""

    def decorator(func):
        belongs_to = group or module_tool_group(func.__module__)
        tool_group_validate(belongs_to)
        _prompts[name] = PromptSpec(name, belongs_to, title, description, tuple(arguments), func, with_context)
        return func

    return decorator


def prompts(groups: Iterable[str]) -> list[PromptSpec]:
    wanted = set(groups)
    return [spec for spec in _prompts.values() if spec.group in wanted]


def get(name: str) -> PromptSpec | None:
    return _prompts.get(name)
