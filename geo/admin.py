"""Staff pages: paste coordinates or upload a CSV, see the resolved codes (the MCP tool's own code)."""

from __future__ import annotations

import csv

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from mcpsite.admin_pages import model_page
from mcpsite.admin_security import StaffModelAdmin

from .errors import InvalidInput
from .forms import ResolvePointsForm
from .models import PointLookup
from .services import point_lookup_create, point_lookup_refresh

TABLE_ROWS = 500  # rows shown on the page; the CSV download has them all


def result_rows(lookup: PointLookup):
    """(index, ref, lat, lon, code, address) per point."""
    for index, (point, result) in enumerate(zip(lookup.points, lookup.results or [], strict=False)):
        yield index, point.get("ref", ""), point["lat"], point["lon"], result["code"], result["address"]


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _spreadsheet_safe(cell):
    """Text a spreadsheet would run as a formula (a ref like `=HYPERLINK(…)`) is exported as text."""
    if isinstance(cell, str) and cell.startswith(FORMULA_PREFIXES):
        return "'" + cell
    return cell


@admin.register(PointLookup)
class PointLookupAdmin(StaffModelAdmin):
    list_display = ["__str__", "granularity", "point_count", "outcome_badge", "created_by", "resolved_at"]
    list_filter = ["granularity", "resolved_at"]
    search_fields = ["name"]
    readonly_fields = [
        "name",
        "granularity",
        "point_count",
        "outcome_badge",
        "error_text",
        "results_table",
        "created_by",
        "created_at",
        "resolved_at",
    ]
    exclude = ["points", "results", "error"]
    actions = ["resolve_again"]
    change_list_template = "admin/geo/pointlookup/change_list.html"

    def has_add_permission(self, request):
        return False  # lookups are made on the resolve page, by resolving

    def has_change_permission(self, request, obj=None):
        return False  # a lookup is a record of what GaluchatAPI answered

    def get_urls(self):
        urls = [
            path("resolve/", self.admin_site.admin_view(self.resolve_view), name="geo_pointlookup_resolve"),
            path("<int:pk>/csv/", self.admin_site.admin_view(self.csv_view), name="geo_pointlookup_csv"),
        ]
        return urls + super().get_urls()

    def resolve_view(self, request):
        if not self.has_resolve_permission(request):
            raise PermissionDenied
        form = ResolvePointsForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            try:
                lookup = point_lookup_create(
                    granularity=form.cleaned_data["granularity"],
                    points=form.cleaned_data["points"],
                    name=form.cleaned_data["name"],
                    actor=request.user,
                )
            except InvalidInput as exc:
                form.add_error(None, f"{exc.message}" + (f" ({exc.location})" if exc.location else ""))
            else:
                if lookup.error:
                    messages.error(request, f"{lookup.error['code']}: {lookup.error['message']}")
                else:
                    messages.success(
                        request,
                        ngettext("Resolved %(count)d point.", "Resolved %(count)d points.", lookup.point_count)
                        % {"count": lookup.point_count},
                    )
                return HttpResponseRedirect(reverse("admin:geo_pointlookup_change", args=[lookup.pk]))
        return model_page(
            self, request, "admin/geo/pointlookup/resolve.html", title=gettext("Resolve points"), form=form
        )

    def csv_view(self, request, pk):
        lookup = get_object_or_404(PointLookup, pk=pk)
        if not self.has_view_permission(request, lookup):
            raise PermissionDenied
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="lookup-{lookup.pk}.csv"'
        response.write("\ufeff")  # lets spreadsheet programs read the UTF-8 Japanese
        writer = csv.writer(response)
        writer.writerow(["index", "ref", "lat", "lon", "code", "address"])
        writer.writerows([[_spreadsheet_safe(cell) for cell in row] for row in result_rows(lookup)])
        return response

    @admin.display(description=_("outcome"))
    def outcome_badge(self, obj):
        tone = {"OK": "ok", "PENDING": "quiet"}.get(obj.outcome, "bad")
        # OK and the upstream's error codes are codes; "not resolved yet" is words.
        label = gettext("not resolved yet") if obj.outcome == "PENDING" else obj.outcome
        return format_html('<strong class="tone-{}">{}</strong>', tone, label)

    @admin.display(description=_("error"))
    def error_text(self, obj):
        if not obj.error:
            return "—"
        location = f" ({obj.error['location']})" if obj.error.get("location") else ""
        return f"{obj.error['code']}: {obj.error['message']}{location}"

    @admin.display(description=_("results"))
    def results_table(self, obj):
        if obj.results is None:
            return "—"
        rows = list(result_rows(obj))
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            (
                (i, ref, lat, lon, code if code is not None else "null", address or "—")
                for i, ref, lat, lon, code, address in rows[:TABLE_ROWS]
            ),
        )
        more = (
            format_html(
                "<p>{}</p>", gettext("Showing %(shown)d of %(total)d rows.") % {"shown": TABLE_ROWS, "total": len(rows)}
            )
            if len(rows) > TABLE_ROWS
            else ""
        )
        return format_html(
            '<p><a class="button" href="{}">{}</a></p>{}'
            '<table class="geo-results"><thead><tr><th>#</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th>'
            "<th>{}</th></tr></thead><tbody>{}</tbody></table>",
            reverse("admin:geo_pointlookup_csv", args=[obj.pk]),
            gettext("Download CSV"),
            more,
            gettext("ref"),
            gettext("latitude"),
            gettext("longitude"),
            gettext("code"),
            gettext("address"),
            body,
        )

    def has_resolve_permission(self, request):
        # Resolving again asks GaluchatAPI, like the resolve page: the same permission.
        return request.user.has_perm("geo.add_pointlookup")

    @admin.action(description=_("Resolve again (e.g. after a GaluchatAPI outage)"), permissions=["resolve"])
    def resolve_again(self, request, queryset):
        for lookup in queryset:
            point_lookup_refresh(lookup=lookup)
        count = queryset.count()
        self.message_user(
            request,
            ngettext("Resolved %(count)d lookup again.", "Resolved %(count)d lookups again.", count) % {"count": count},
        )
