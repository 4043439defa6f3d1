import json
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from django_tasks_db.admin import DBTaskResultAdmin
from django_tasks_db.models import DBTaskResult

from . import services
from .admin_dates import date_range
from .admin_lists import BOUNDED_DATES_CHANGE_LIST, CappedCountPaginator, FoldedSearchMixin, indexed_values_filter
from .admin_pages import model_page
from .admin_security import StaffModelAdmin, grantable_scopes
from .client_config import http_client_config
from .core.scopes import MODES, READ, WRITE, scope_group, scope_name, scopes_compact, scopes_expand, tool_groups
from .models import ApiKey, ToolCall

MODE_CHOICE_LABELS = {READ: _("read"), WRITE: _("write")}


def scope_choices() -> list[tuple[str, list[tuple[str, Any]]]]:
    """One box per group and mode, grouped by tool group."""
    return [(g, [(scope_name(g, m), MODE_CHOICE_LABELS[m]) for m in MODES]) for g in tool_groups()]


class ApiKeyForm(forms.ModelForm):
    scopes = forms.MultipleChoiceField(
        choices=scope_choices,
        widget=forms.CheckboxSelectMultiple,
        label=_("scopes"),
        help_text=_("Tool groups this key may use: read runs the group's read-only tools, write its other tools."),
    )

    grantable: set[str] = set()  # the scopes the staff member may give (ApiKeyAdmin.get_form sets it)

    class Meta:
        model = ApiKey
        fields = ["name", "owner", "scopes", "rate", "is_active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:  # a bare group is both of its boxes
            self.initial["scopes"] = scopes_expand(self.instance.scopes)

    def clean_scopes(self):
        """No scope of a group the staff member could not use themselves; removing scopes is always allowed. Stored
        compacted: a group chosen in both modes is the bare group."""
        scopes = self.cleaned_data["scopes"]
        held = scopes_expand(self.instance.scopes if self.instance.pk else [])
        added = {scope_group(s) for s in set(scopes) - set(held)} - self.grantable
        if added:
            raise forms.ValidationError(
                gettext(
                    "You may not give the scope(s) %(scopes)s: "
                    "a scope needs the admin permissions its tools use (see docs/security.md, Staff permissions)."
                )
                % {"scopes": ", ".join(sorted(added))}
            )
        return scopes_compact(scopes)


@admin.register(ApiKey)
class ApiKeyAdmin(FoldedSearchMixin, StaffModelAdmin):
    form = ApiKeyForm
    list_display = ["name", "prefix", "owner", "scope_list", "rate", "is_active", "created_at", "last_used_at"]
    list_filter = ["is_active"]
    search_fields = ["name", "prefix", "owner__username"]
    folded_search_key = "name_key"
    readonly_fields = ["prefix", "created_at", "last_used_at"]
    actions = ["deactivate"]

    @admin.display(description=_("scopes"))
    def scope_list(self, obj):
        return ", ".join(obj.scopes)

    def get_readonly_fields(self, request, obj=None):
        # A key acts as its owner: only a superuser may make or move a key for someone else.
        owner = [] if request.user.is_superuser else ["owner"]
        return [*self.readonly_fields, *owner]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"grantable": grantable_scopes(request.user)})

    def save_model(self, request, obj, form, change):
        if not change:
            if not request.user.is_superuser:
                obj.owner = request.user
            obj.raw_key = obj.set_new_key()  # transient: shown by response_add, never stored
        super().save_model(request, obj, form, change)

    def response_add(self, request, obj, post_url_continue=None):
        """Redirect to the key's one showing (POST, redirect, GET): a reload of that page creates nothing and shows
        the key no more. The key waits sealed server-side for that one read (services.api_key_hold_for_showing),
        never in the messages framework's cookie or the session."""
        token = services.api_key_hold_for_showing(raw_key=obj.raw_key, user_pk=request.user.pk)
        url = reverse("admin:mcpsite_apikey_created", args=[obj.pk])
        return HttpResponseRedirect(f"{url}?{urlencode({'t': token})}")

    def get_urls(self):
        view = self.admin_site.admin_view(self.created_view)
        return [path("<int:pk>/created/", view, name="mcpsite_apikey_created"), *super().get_urls()]

    def created_view(self, request, pk: int):
        """The new key, shown once, marked no-store so no cache or back button keeps it; after that the page says
        the key was shown and cannot be shown again."""
        api_key = get_object_or_404(ApiKey, pk=pk)
        if not self.has_view_or_change_permission(request, api_key):
            raise PermissionDenied
        raw_key = services.api_key_take_held(token=request.GET.get("t", ""), user_pk=request.user.pk)
        mcp_url = request.build_absolute_uri("/mcp")  # served by the ASGI router, not a Django URL
        http_config = http_client_config(mcp_url=mcp_url, raw_key=raw_key) if raw_key else None
        response = model_page(
            self,
            request,
            "admin/mcpsite/apikey/created.html",
            title=gettext("API key created"),
            api_key=api_key,
            raw_key=raw_key,
            http_config=json.dumps(http_config, indent=2) if http_config else "",
        )
        add_never_cache_headers(response)
        return response

    @admin.action(description=_("Deactivate selected keys"), permissions=["change"])
    def deactivate(self, request, queryset):
        updated = queryset.update(is_active=False)
        self.message_user(
            request,
            ngettext("%(count)d key deactivated.", "%(count)d keys deactivated.", updated) % {"count": updated},
        )


@admin.register(ToolCall)
class ToolCallAdmin(StaffModelAdmin):
    list_display = [
        "created_at", "tool", "transport", "outcome", "error_code", "scope", "duration_ms", "api_key", "request_id"
    ]  # fmt: skip
    # At a million rows (bench/bench_staff_pages.py): the transport and tool choices, the date hierarchy and the
    # total are found through indexes (mcpsite/admin_lists.py), not by reading every row.
    list_filter = [
        "outcome",
        indexed_values_filter(ToolCall, "transport"),
        indexed_values_filter(ToolCall, "tool"),
        "created_at",
        date_range("created_at"),
    ]
    search_fields = ["tool", "request_id", "api_key__name"]
    date_hierarchy = "created_at"
    change_list_template = BOUNDED_DATES_CHANGE_LIST
    show_full_result_count = False
    paginator = CappedCountPaginator
    list_select_related = ["api_key"]

    def get_search_results(self, request, queryset, search_term):
        """A request ID is found through its index (one exact match); any other term is searched in the tool and
        the key's name as Django does, which reads every row."""
        term = search_term.strip()
        if term and ToolCall.objects.filter(request_id=term).exists():
            return queryset.filter(request_id=term), False
        return super().get_search_results(request, queryset, search_term)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


# django-tasks-db's task results (the reminder worker's queue), with the labels it declares as plain strings
# (0.13.0: never passed to gettext) given in the staff's language.
admin.site.unregister(DBTaskResult)


@admin.register(DBTaskResult)
class TaskResultAdmin(DBTaskResultAdmin):
    list_display = (
        "task_id",
        "task_label",
        "status",
        "enqueued_at",
        "started_at",
        "finished_at",
        "priority",
        "queue_name",
    )

    @admin.display(description=_("ID"), ordering="id")
    def task_id(self, obj: DBTaskResult) -> str:
        return str(obj.id)

    @admin.display(description=_("task name"), ordering="task_path")
    def task_label(self, obj: DBTaskResult) -> str:
        return obj.task_name

    @admin.display(description=_("traceback"))
    def formatted_traceback(self, obj: DBTaskResult) -> str:
        return super().formatted_traceback(obj)

    @admin.display(description=_("run after"))
    def display_run_after(self, obj: DBTaskResult):
        return super().display_run_after(obj)
