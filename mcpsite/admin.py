import json

from django import forms
from django.contrib import admin
from django.utils.cache import add_never_cache_headers

from .admin_pages import model_page
from .client_config import http_client_config
from .mcp.registry import GROUPS
from .models import ApiKey, ToolCall


class ApiKeyForm(forms.ModelForm):
    scopes = forms.MultipleChoiceField(
        choices=[(g, g) for g in GROUPS], widget=forms.CheckboxSelectMultiple, help_text="Tool groups this key may use."
    )

    class Meta:
        model = ApiKey
        fields = ["name", "owner", "scopes", "rate", "is_active"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    form = ApiKeyForm
    list_display = ["name", "prefix", "owner", "scope_list", "rate", "is_active", "created_at", "last_used_at"]
    list_filter = ["is_active"]
    search_fields = ["name", "prefix", "owner__username"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
    actions = ["deactivate"]

    @admin.display(description="scopes")
    def scope_list(self, obj):
        return ", ".join(obj.scopes)

    def save_model(self, request, obj, form, change):
        if not change:
            obj.raw_key = obj.set_new_key()  # transient: shown by response_add, never stored
        super().save_model(request, obj, form, change)

    def response_add(self, request, obj, post_url_continue=None):
        """Show the new key on this response only: not through the messages framework (a cookie or the session
        would hold it until displayed), and marked no-store so no cache or back button keeps it."""
        mcp_url = request.build_absolute_uri("/mcp")  # served by the ASGI router, not a Django URL
        response = model_page(
            self,
            request,
            "admin/mcpsite/apikey/created.html",
            title="API key created",
            api_key=obj,
            raw_key=obj.raw_key,
            http_config=json.dumps(http_client_config(mcp_url=mcp_url, raw_key=obj.raw_key), indent=2),
        )
        add_never_cache_headers(response)
        return response

    @admin.action(description="Deactivate selected keys")
    def deactivate(self, request, queryset):
        updated = queryset.update(is_active=False)
        self.message_user(request, f"{updated} key(s) deactivated.")


@admin.register(ToolCall)
class ToolCallAdmin(admin.ModelAdmin):
    list_display = ["created_at", "tool", "transport", "outcome", "error_code", "duration_ms", "api_key", "request_id"]
    list_filter = ["outcome", "transport", "tool", "created_at"]
    search_fields = ["tool", "request_id", "api_key__name"]
    date_hierarchy = "created_at"
    list_select_related = ["api_key"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
