"""What every search backend is and how it fails: the leaf both `search` and `meili` import (no cycle)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .models import Product


class SearchBackendError(Exception):
    """The search service failed (unreachable, error status, timeout, malformed answer)."""


class SearchBackend(Protocol):
    name: str

    def search(self, query: str, *, limit: int) -> list[int]:
        """Ids of active in-stock products matching `query`, best first, at most `limit`."""
        ...

    def products(self, query: str, *, limit: int) -> list[Product]:
        """The same products, loaded (their listed fields, current stock and prices), best first."""
        ...
