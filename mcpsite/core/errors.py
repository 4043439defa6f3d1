"""The one application-error hierarchy. Services raise these; transports render them.

An `ApplicationError` has a kind (what went wrong, in the domain's words), a short message and optional `data`.
It knows no wire format: the transport layer maps each kind to its JSON-RPC code and HTTP status in one table
(`mcpsite/mcp/wire.py`). Tools whose seed has its own in-band error shape (geo, reminders) register a renderer in
the registry instead.
"""

from __future__ import annotations

import enum
from typing import Any

from django.utils.translation import gettext

from .scopes import READ, scope_name


class Message(str):
    """A message a person reads: the English text (what tools and logs get, byte for byte) that staff pages show in
    the page's language (`translated`). Mark the template for the catalogue where it is written:
    `Message(gettext_noop("Only %(count)d in stock"), count=5)` is the str "Only 5 in stock"."""

    template: str
    params: dict[str, Any]

    def __new__(cls, template: str, **params: Any) -> Message:
        text = super().__new__(cls, template % params if params else template)
        text.template = template
        text.params = params
        return text

    def translated(self) -> str:
        params = {k: translated(v) if isinstance(v, str) else v for k, v in self.params.items()}
        return gettext(self.template) % params if params else gettext(self.template)


def translated(text: str) -> str:
    """`text` in the active language when it is a `Message`, else as it is (data, a name)."""
    return text.translated() if isinstance(text, Message) else text


class ErrorKind(enum.Enum):
    PARSE_ERROR = "parse_error"
    INVALID_REQUEST = "invalid_request"
    METHOD_NOT_FOUND = "method_not_found"
    INVALID_PARAMS = "invalid_params"
    # A tools/call naming no tool the endpoint serves (docs/decisions/0002-errors.md has each transport's answer).
    UNKNOWN_TOOL = "unknown_tool"
    INTERNAL = "internal"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    # The API key lacks the tool's scope (a refusal of the whole request, unlike a wrong password).
    SCOPE_DENIED = "scope_denied"
    NOT_FOUND = "not_found"
    # An MCP resource URI that names nothing this caller may read (MCP's own code, not a seed's 404).
    RESOURCE_NOT_FOUND = "resource_not_found"
    CONFLICT = "conflict"
    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    REQUEST_TIMEOUT = "request_timeout"
    # Another service's failures (geo's GaluchatAPI): it refused for its rate, failed, or answered nonsense.
    UPSTREAM_RATE_LIMITED = "upstream_rate_limited"
    UPSTREAM_FAILED = "upstream_failed"
    UPSTREAM_UNUSABLE = "upstream_unusable"
    # An idempotency key already used with other arguments; a key whose first call is still running.
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
    IDEMPOTENCY_IN_PROGRESS = "idempotency_in_progress"


class ApplicationError(Exception):
    kind: ErrorKind = ErrorKind.INTERNAL
    message: str = "Internal error"

    def __init__(self, message: str | None = None, data: Any = None, *, retry_after: int | None = None):
        self.message = message or type(self).message
        self.data = data
        # Whole seconds until a retry may succeed (the `Retry-After` of a refusal), where the refusal knows it.
        self.retry_after = retry_after
        super().__init__(self.message)

    @property
    def detail(self) -> str:
        """The most specific human text: the data's message when there is one."""
        if isinstance(self.data, str):
            return self.data
        if isinstance(self.data, dict) and isinstance(self.data.get("message"), str):
            return self.data["message"]
        return self.message

    @property
    def human(self) -> str:
        """`detail` in the page's language, for staff pages (tools keep the English `detail`)."""
        return translated(self.detail)


class ResourceNotFound(ApplicationError):
    kind = ErrorKind.RESOURCE_NOT_FOUND
    message = "Resource not found"


class ParseError(ApplicationError):
    kind = ErrorKind.PARSE_ERROR
    message = "Parse error"


class InvalidRequest(ApplicationError):
    kind = ErrorKind.INVALID_REQUEST
    message = "Invalid Request"


class MethodNotFound(ApplicationError):
    kind = ErrorKind.METHOD_NOT_FOUND
    message = "Method not found"


class InvalidParams(ApplicationError):
    kind = ErrorKind.INVALID_PARAMS
    message = "Invalid params"


class UnknownTool(InvalidParams):
    """A tools/call naming no tool the endpoint serves: invalid params, as MCP says for `tools/call`."""

    kind = ErrorKind.UNKNOWN_TOOL


class InternalError(ApplicationError):
    kind = ErrorKind.INTERNAL
    message = "Internal error"


class Unauthorized(ApplicationError):
    """A refused API key: the seeds' body (`{"code": 401, "message": "Invalid API key"}`)."""

    kind = ErrorKind.UNAUTHORIZED
    message = "Invalid API key"


class MissingCredentials(Unauthorized):
    """No credential at all."""

    message = "Authentication required: send Authorization: Bearer <API key or OAuth access token>"


class InvalidAccessToken(Unauthorized):
    """A bearer token that is no API key and no live OAuth access token for this resource."""

    message = "Invalid or expired access token"


class Forbidden(ApplicationError):
    kind = ErrorKind.FORBIDDEN
    message = "Forbidden"


class ScopeDenied(Forbidden):
    """The API key or token lacks the tool's scope (a transport-level refusal, unlike a wrong password)."""

    kind = ErrorKind.SCOPE_DENIED
    # The scope that would have allowed the call (`ledger:write`), where the refusal knows it: what the audit
    # records and an OAuth challenge names.
    scope: str = ""

    @classmethod
    def for_group(cls, principal: object, group: str, what: str = "tools", *, mode: str | None = None) -> ScopeDenied:
        """Worded for the credential presented: an OAuth token (`kind` "oauth") or an API key. With `mode`, the
        scope needed is the group's in that mode; a credential that holds the group in the other mode is told
        which."""
        credential = "token" if getattr(principal, "kind", "api_key") == "oauth" else "API key"
        needed = scope_name(group, mode)
        holds_other_mode = mode is not None and principal is not None and principal.allows(group)  # type: ignore[attr-defined]
        which = (" that only read" if mode == READ else " that write") if holds_other_mode else ""
        denied = cls(f"This {credential} may not use {group} {what}{which}")
        denied.data, denied.scope = f"Scope '{needed}' required", needed
        return denied


class NotFound(ApplicationError):
    kind = ErrorKind.NOT_FOUND
    message = "Not Found"


class Conflict(ApplicationError):
    kind = ErrorKind.CONFLICT
    message = "Conflict"


class RateLimited(ApplicationError):
    kind = ErrorKind.RATE_LIMITED
    message = "Rate limit exceeded"


class ServiceUnavailable(ApplicationError):
    kind = ErrorKind.UNAVAILABLE
    message = "Service unavailable"


class PayloadTooLarge(ApplicationError):
    kind = ErrorKind.PAYLOAD_TOO_LARGE
    message = "Request body too large"


class RequestTimeout(ApplicationError):
    kind = ErrorKind.REQUEST_TIMEOUT
    message = "Request body timed out"


class IdempotencyConflict(ApplicationError):
    """The idempotency key was used before, for this tool, with other arguments (SEP-3182: never executed, never
    the other call's result)."""

    kind = ErrorKind.IDEMPOTENCY_CONFLICT
    message = "Idempotency key reused with different arguments"


class IdempotencyInProgress(ApplicationError):
    """The first call with this idempotency key is still running; retry after `retry_after` seconds."""

    kind = ErrorKind.IDEMPOTENCY_IN_PROGRESS
    message = "A request with this idempotency key is in progress"
