"""One MCP tools/call and its client: confirmation (elicitation), progress and cancellation over the SDK session.

Tools run in worker threads (threads.in_worker_thread); the SDK session lives on the event loop. A
`SessionInteraction` carries a tool's requests from its thread to the loop and waits for the answer (2025-11-25);
a `RoundTripInteraction` asks by answering `input_required` and reads the answer from the client's retry
(2026-07-28).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import secrets
import threading
import warnings
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

import mcp_types as types
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpsite.core import metrics

from .interaction import Confirmation, Elicitation, InputRequired, Interaction, elicitation_request
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


_ANSWERED = {Confirmation.ACCEPT: "accepted", Confirmation.DECLINE: "declined", Confirmation.CANCEL: "cancelled"}


def confirmation_of(action: str, content: Any) -> Confirmation:
    """An elicitation answer to CONFIRM_SCHEMA's form: only an accept with `confirm: true` goes ahead."""
    if action == "accept":
        confirmed = isinstance(content, dict) and content.get("confirm") is True
        return answered(Confirmation.ACCEPT if confirmed else Confirmation.DECLINE)
    return answered(Confirmation(action))


def answered(confirmation: Confirmation) -> Confirmation:
    """`confirmation`, counted (mcpsite_confirmations_total)."""
    metrics.confirmation(_ANSWERED[confirmation])
    return confirmation


class SessionInteraction(Interaction):
    def __init__(self, sdk_ctx: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._ctx = sdk_ctx
        self._loop = loop
        self._cancelled = threading.Event()
        self._asked = False

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def can_confirm(self) -> bool:
        # The client must have said it can show a form, and this request must have a channel for the question
        # and the answer: stateless HTTP and JSON-response mode have none (README "Production").
        capabilities = self._ctx.session.client_capabilities
        return bool(capabilities and capabilities.elicitation is not None and self._ctx.session.can_send_request)

    def confirm(self, message: str, details: dict[str, Any] | None = None) -> Confirmation:
        self._asked = True
        metrics.confirmation("asked")
        try:
            answer = self._run(
                self._ctx.session.elicit_form(message, CONFIRM_SCHEMA, related_request_id=self._ctx.request_id)
            )
        except Exception:
            # The client failed to answer: nothing was agreed to, so nothing happens.
            logger.warning("Confirmation request failed; treated as cancelled", exc_info=True)
            return answered(Confirmation.CANCEL)
        return confirmation_of(answer.action, answer.content)

    def asked(self) -> bool:
        return self._asked

    def elicit(self, message: str, schema: dict[str, Any]) -> Elicitation:
        answer = self._run(self._ctx.session.elicit_form(message, schema, related_request_id=self._ctx.request_id))
        return Elicitation(Confirmation(answer.action), answer.content)

    def sample(self, prompt: str, max_tokens: int) -> str:
        capabilities = self._ctx.session.client_capabilities
        if not (capabilities and capabilities.sampling is not None and self._ctx.session.can_send_request):
            raise RuntimeError("The client offers no sampling on this request")
        message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
        answer = self._run(
            self._ctx.session.create_message([message], max_tokens=max_tokens, related_request_id=self._ctx.request_id)
        )
        return answer.content.text if isinstance(answer.content, types.TextContent) else ""

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        try:
            self._run(self._ctx.session.report_progress(done, total, message))
        except Exception:  # progress is informative; a closed stream must not fail the call
            logger.debug("Progress notification not delivered", exc_info=True)

    def client_can(self, capability: str) -> bool:
        return getattr(self._ctx.session.client_capabilities, capability, None) is not None

    def log(self, level: str, data: object) -> None:
        try:
            with warnings.catch_warnings():
                # notifications/message is deprecated in 2026-07-28; the SDK sends it only where the request asked.
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                message = self._ctx.session.send_log_message(level, data, related_request_id=self._ctx.request_id)
            self._run(message)
        except Exception:  # like progress: informative only
            logger.debug("Log notification not delivered", exc_info=True)

    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()


# The key of a confirmation's input request (in `inputRequests`) and of its answer (in `inputResponses`).
CONFIRM_INPUT = "confirm"


class RoundTripInteraction(SessionInteraction):
    """Protocol 2026-07-28: no server-to-client requests, so a confirmation is a multi round-trip (SEP-2322).

    The first call answers `input_required` (`confirm()` raises `InputRequired`: nothing is written) with the
    question and a state naming it: a digest of the question's text and a fresh random nonce. The client asks the
    user and calls again with the answer and the state (verified by requeststate's SDK boundary before we see it).
    `confirm()` then returns that answer when it answers this very text: if the text changed in between (the
    contact's address was edited), the user is asked again. The nonce is the confirmation's key, whatever the answer:
    the tool stores it unique with its write on accept, so a client repeating that retry (a lost reply) does nothing a
    second time, and a later answer to the same question finds what the first accept did.
    Progress and cancellation are the session's (on the call's own response stream)."""

    def __init__(self, sdk_ctx: Any, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(sdk_ctx, loop)
        params = sdk_ctx.params or {}
        self._plain_state = params.get("requestState") if isinstance(params.get("requestState"), str) else None
        self._state = _round_state(self._plain_state)
        responses = params.get("inputResponses")
        self._responses: dict[str, Any] = responses if isinstance(responses, dict) else {}
        self._answer = self._responses.get(CONFIRM_INPUT)
        self._key: str | None = None

    def input_responses(self) -> dict[str, Any]:
        return self._responses

    def request_state(self) -> str | None:
        return self._plain_state

    def can_confirm(self) -> bool:
        # Form elicitation declared in this request's capabilities: a bare `elicitation: {}` (from before modes
        # existed) counts, URL-only does not (as the SDK's own resolvers decide).
        capabilities = self._ctx.session.client_capabilities
        elicitation = capabilities.elicitation if capabilities is not None else None
        return elicitation is not None and (elicitation.form is not None or elicitation.url is None)

    def confirm(self, message: str, details: dict[str, Any] | None = None) -> Confirmation:
        digest = text_digest(message)
        state, answer = self._state, self._answer
        if state is not None and state["text"] == digest and isinstance(answer, dict):
            action = answer.get("action")
            if action in ("accept", "decline", "cancel"):
                self._asked, self._key = True, state["nonce"]
                return confirmation_of(action, answer.get("content"))
        fresh = json.dumps({"text": digest, "nonce": secrets.token_urlsafe(16)})
        metrics.confirmation("asked")
        raise InputRequired({CONFIRM_INPUT: elicitation_request(message, CONFIRM_SCHEMA)}, fresh)

    @property
    def confirmation_key(self) -> str | None:
        return self._key


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _round_state(plaintext: Any) -> dict[str, str] | None:
    """The state this server minted for an earlier round (the boundary refused anything else), or None."""
    if not isinstance(plaintext, str):
        return None
    try:
        state = json.loads(plaintext)
    except ValueError:
        return None
    if not (isinstance(state, dict) and isinstance(state.get("text"), str) and isinstance(state.get("nonce"), str)):
        return None
    return state


def input_required_result(asked: InputRequired) -> types.InputRequiredResult:
    """The `input_required` answer to a call that asked (its state is sealed on its way out by requeststate's
    boundary)."""
    return types.InputRequiredResult.model_validate({"inputRequests": asked.requests, "requestState": asked.state})


def with_session(call_ctx: CallContext, sdk_ctx: Any) -> tuple[CallContext, SessionInteraction]:
    """The call's interaction: a round trip on protocol 2026-07-28, else requests on the session."""
    kind = RoundTripInteraction if sdk_ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else SessionInteraction
    interaction = kind(sdk_ctx, asyncio.get_running_loop())
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
