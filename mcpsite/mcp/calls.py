"""One MCP tools/call and its client: confirmation (elicitation), progress and cancellation over the SDK session.

Tools run in worker threads (dispatch.in_worker_thread); the SDK session lives on the event loop. A
`SessionInteraction` carries a tool's requests from its thread to the loop and waits for the answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

from .interaction import Confirmation, Interaction
from .registry import CallContext

logger = logging.getLogger("mcpsite.mcp")

T = TypeVar("T")

# The form a confirmation shows: one yes/no question, the text above it says what would happen.
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {"type": "boolean", "title": "実行する / Go ahead", "default": False},
    },
    "required": ["confirm"],
}


class SessionInteraction(Interaction):
    def __init__(self, sdk_ctx: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._ctx = sdk_ctx
        self._loop = loop
        self._cancelled = threading.Event()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def can_confirm(self) -> bool:
        # The client must have said it can show a form, and this request must have a channel for the question
        # and the answer: stateless HTTP and JSON-response mode have none (README "Production").
        capabilities = self._ctx.session.client_capabilities
        return bool(capabilities and capabilities.elicitation is not None and self._ctx.session.can_send_request)

    def confirm(self, message: str) -> Confirmation:
        try:
            answer = self._run(
                self._ctx.session.elicit_form(message, CONFIRM_SCHEMA, related_request_id=self._ctx.request_id)
            )
        except Exception:
            # The client failed to answer: nothing was agreed to, so nothing happens.
            logger.warning("Confirmation request failed; treated as cancelled", exc_info=True)
            return Confirmation.CANCEL
        if answer.action == "accept":
            return Confirmation.ACCEPT if (answer.content or {}).get("confirm") is True else Confirmation.DECLINE
        return Confirmation(answer.action)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        try:
            self._run(self._ctx.session.report_progress(done, total, message))
        except Exception:  # progress is informative; a closed stream must not fail the call
            logger.debug("Progress notification not delivered", exc_info=True)

    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()


def with_session(call_ctx: CallContext, sdk_ctx: Any) -> tuple[CallContext, SessionInteraction]:
    interaction = SessionInteraction(sdk_ctx, asyncio.get_running_loop())
    return dataclasses.replace(call_ctx, interaction=interaction), interaction


async def run_cancellable[T](awaitable: Awaitable[T], interaction: SessionInteraction) -> T:
    """Await a call running in a worker thread. On cancellation (notifications/cancelled, a closed connection) the
    tool is told at once through `interaction.cancelled()`, so it stops before its next upstream request; its
    thread cannot be interrupted, so the call still ends (and is audited) in the background."""
    task = asyncio.ensure_future(awaitable)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        interaction.cancel()
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # nobody awaits it now
        raise
