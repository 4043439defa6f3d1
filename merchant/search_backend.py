"""What every search backend is and how it fails: the leaf both `search` and `meili` import (no cycle)."""

from __future__ import annotations

from typing import Protocol


class SearchBackendError(Exception):
    """The search service failed (unreachable, error status, timeout, malformed answer)."""


class SearchBackend(Protocol):
    name: str

    def search(self, query: str, *, limit: int) -> list[int]:
        """Ids of active in-stock products matching `query`, best first, at most `limit`."""
        ...
