from urllib.parse import urlsplit

from django.contrib import admin
from django.db.models import Count, Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from oauth2_provider import models as dot_models

from mcpsite.admin_security import StaffModelAdmin

from . import selectors, services
from .models import AuthorizedClient, LiveToken

# The toolkit's own admin pages (its raw tables, in English) give way to the two below.
for model in (
    dot_models.get_application_model(),
    dot_models.get_access_token_model(),
    dot_models.get_refresh_token_model(),
    dot_models.get_grant_model(),
    dot_models.get_id_token_model(),
):
    if admin.site.is_registered(model):
        admin.site.unregister(model)


def redirect_hosts(uris: str) -> str:
    return ", ".join(sorted({urlsplit(uri).netloc or uri for uri in uris.split()}))


@admin.register(AuthorizedClient)
class AuthorizedClientAdmin(StaffModelAdmin):
    list_display = ["display_name", "registration_source", "redirect_host_list", "live_token_count", "created"]
    list_filter = ["registration_source", "created"]
    search_fields = ["name", "client_id"]
    fields = ["name", "client_id", "registration_source", "client_type", "redirect_uris", "created"]
    readonly_fields = fields  # type: ignore[assignment]  # the same names (django-stubs types the two apart)
    actions = ["revoke_access"]

    def get_queryset(self, request):
        live = Q(accesstoken__in=selectors.live_tokens())
        return super().get_queryset(request).annotate(live_tokens=Count("accesstoken", filter=live))

    def has_add_permission(self, request):
        return False  # clients register themselves (RFC 7591 or a metadata document)

    @admin.display(description=_("name"), ordering="name")
    def display_name(self, obj):
        return obj.name or obj.client_id

    @admin.display(description=_("redirect hosts"))
    def redirect_host_list(self, obj):
        return redirect_hosts(obj.redirect_uris)

    @admin.display(description=_("live tokens"), ordering="live_tokens")
    def live_token_count(self, obj):
        return obj.live_tokens

    @admin.action(description=_("Revoke all access of selected clients"), permissions=["change"])
    def revoke_access(self, request, queryset):
        count = services.client_access_revoke(application_ids=queryset.values_list("pk", flat=True))
        self.message_user(
            request,
            ngettext("%(count)d token revoked.", "%(count)d tokens revoked.", count) % {"count": count},
        )


@admin.register(LiveToken)
class LiveTokenAdmin(StaffModelAdmin):
    list_display = ["user", "application", "scope", "expires", "created"]
    list_filter = ["application", "expires"]
    search_fields = ["user__username", "application__name"]
    list_select_related = ["user", "application"]
    fields = ["user", "application", "scope", "resource", "expires", "created"]
    readonly_fields = fields  # type: ignore[assignment]  # the same names (django-stubs types the two apart)
    actions = ["revoke"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(pk__in=selectors.live_tokens().values("pk"))

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # deleting a row would leave its refresh token usable: revoke instead

    @admin.action(description=_("Revoke selected tokens"), permissions=["change"])
    def revoke(self, request, queryset):
        count = services.access_tokens_revoke(token_ids=queryset.values_list("pk", flat=True))
        self.message_user(
            request,
            ngettext("%(count)d token revoked.", "%(count)d tokens revoked.", count) % {"count": count},
        )
