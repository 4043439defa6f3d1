"""The staff's one search box (mcpsite/staff_search.py): what a query is and what each kind of record answers.

Each app declares, on its AppConfig (`staff_search`), a selector per model it offers: `(query=SearchQuery,
limit=int) -> list[SearchHit]`, newest or most relevant first. A selector matches identifiers as typed (a
reservation number, an entry's ID, a SKU, a key's prefix) and names by their folded key (`text.search_key`, stored
in an indexed column beside the name), so ﾃﾞﾓ, でも and デモ meet. It searches no secret field
(`AppConfig.secret_fields`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from .text import search_terms

MAX_LENGTH = 200  # longer input is cut: no name or identifier searched is longer


@dataclass(frozen=True, slots=True)
class SearchQuery:
    text: str  # as typed, stripped
    terms: list[str] = field(default_factory=list)  # its folded terms (`search_terms`)

    @classmethod
    def parse(cls, text: str | None) -> SearchQuery:
        # Control characters are no part of a name or an identifier (and PostgreSQL refuses a NUL in text).
        text = "".join(c if c.isprintable() else " " for c in text or "").strip()[:MAX_LENGTH]
        return cls(text, search_terms(text))

    def __bool__(self) -> bool:
        return bool(self.terms)

    def key_holds(self, key_field: str) -> Q:
        """Rows whose folded key holds every term (LIKE '%term%': a trigram index serves it on PostgreSQL)."""
        return Q(*(Q(**{f"{key_field}__contains": term}) for term in self.terms))


@dataclass(frozen=True, slots=True)
class SearchHit:
    pk: Any  # the change page's object
    title: str  # what identifies it (number, name)
    detail: str = ""  # one line of context (show, date, SKU, owner)


def with_update_fields(kwargs: dict[str, Any], *names: str) -> dict[str, Any]:
    """A model's save() arguments with `names` added to its `update_fields`, if any: a folded key is saved with
    the field it folds."""
    update_fields = kwargs.get("update_fields")
    if update_fields is not None:
        kwargs["update_fields"] = [*dict.fromkeys([*update_fields, *names])]
    return kwargs
