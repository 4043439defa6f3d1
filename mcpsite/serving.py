"""uvicorn's httptools protocol with a bound on the time a request's headers may take to arrive.

uvicorn bounds the idle time between requests (`--timeout-keep-alive`) but not a request whose headers trickle in a
byte at a time: such a connection held a slot for as long as its client liked. Here a connection that has not
finished a request's headers within HTTP_HEADER_TIMEOUT_S seconds of its first byte (or of connecting) is closed.
The body has its own bound in the ingress (HTTP_BODY_TIMEOUT_S). `scripts/serve` runs uvicorn with
`--http mcpsite.serving:HeaderTimeoutProtocol`; docs/upgrades.md names what this relies on.
"""

from __future__ import annotations

import asyncio

from django.conf import settings
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class HeaderTimeoutProtocol(HttpToolsProtocol):
    _header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._header_deadline = self.loop.call_later(settings.HTTP_HEADER_TIMEOUT_S, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if self.cycle is None or self.cycle.response_complete:  # no request of this connection is being answered
            self.transport.close()
