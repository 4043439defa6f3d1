"""The staff's one search box: reservations, journal entries, products and API keys, from the header of every admin
page (`/admin/search/?q=`).

Each app names what it offers on its AppConfig (`staff_search`: {model label: dotted path of a selector}, see
`mcpsite.core.search`), as it names its dashboard blocks, so adding an app touches no platform file. A kind is
searched only for staff whose role may view its list (the model admin's view permission), at most `PER_KIND` hits
each (one query per kind, bounded by a LIMIT), each linking to its change page.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.apps import apps
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.module_loading import import_string
from django.utils.translation import gettext

from .core.search import SearchHit, SearchQuery

PER_KIND = 10
QUERY_PARAM = "q"  # the changelists' own search parameter too, so "all results" opens the list searched alike


@dataclass(frozen=True, slots=True)
class HitLink:
    hit: SearchHit
    href: str  # its change page


@dataclass(frozen=True, slots=True)
class SearchGroup:
    model: str  # its label ("cinema.reservation")
    kind: str  # the model's plural name
    hits: list[HitLink]
    more: bool  # more than PER_KIND matched
    changelist: str  # the model's list, searched for the same text


def searched_models() -> list[tuple[str, str]]:
    """(model label, selector path) of every installed app in INSTALLED_APPS order, the platform's own last."""
    own = apps.get_app_config("mcpsite")
    configs = [c for c in apps.get_app_configs() if c is not own] + [own]
    return [item for config in configs for item in getattr(config, "staff_search", {}).items()]


def staff_search(*, request, query: SearchQuery, per_kind: int = PER_KIND) -> list[SearchGroup]:
    """The kinds `request.user` may view, each with its hits for `query` (empty kinds included, so the page can say
    where it looked)."""
    groups = []
    for label, path in searched_models():
        model = apps.get_model(label)
        if not admin.site.is_registered(model) or not admin.site.get_model_admin(model).has_view_permission(request):
            continue
        hits = import_string(path)(query=query, limit=per_kind + 1) if query else []
        opts = model._meta
        links = [
            HitLink(hit, reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[quote(hit.pk)]))
            for hit in hits[:per_kind]
        ]
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        groups.append(
            SearchGroup(
                model=label,
                kind=str(opts.verbose_name_plural),
                hits=links,
                more=len(hits) > per_kind,
                changelist=f"{changelist}?{urlencode({QUERY_PARAM: query.text})}",
            )
        )
    return groups


def search_view(request):
    """`/admin/search/?q=…`: the results, grouped by kind, in the admin's chrome."""
    query = SearchQuery.parse(request.GET.get(QUERY_PARAM))
    groups = staff_search(request=request, query=query)
    context = {
        **admin.site.each_context(request),
        "title": gettext("Search") if not query.text else gettext("Search: %(query)s") % {"query": query.text},
        "staff_query": query,
        "groups": groups,
        "found": any(group.hits for group in groups),
        "per_kind": PER_KIND,
    }
    return TemplateResponse(request, "admin/staff_search.html", context)
