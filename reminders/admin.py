"""Staff views: contacts, events, messages with delivery status, reminders with their history."""

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from mcpsite.admin_security import ReadOnlyModelAdmin, StaffModelAdmin
from mcpsite.core.errors import ApplicationError
from mcpsite.formats import moment_in

from . import services
from .models import Contact, Event, Message, Profile, Reminder, ReminderDelivery, zone_for
from .schedule import describe_rule
from .webhooks import REFUSED, WebhookTargetRefused, webhook_url_validate

# Each status's tone (mcpsite/static/mcpsite/admin-tones.css: readable on light and dark pages).
STATUS_TONES = {"queued": "quiet", "sending": "warn", "sent": "ok", "failed": "bad"}


def _badge(obj: Message | ReminderDelivery):
    """The status's label (translated), coloured by its value."""
    tone = STATUS_TONES.get(obj.status, "quiet")
    return format_html('<strong class="tone-{}">{}</strong>', tone, obj.get_status_display())


class ProfileForm(forms.ModelForm):
    """The webhook URL is write-only, like a password: its path, query or user info is often its secret, so a saved
    URL is never sent back to the browser. Blank keeps it, a new URL replaces it, the checkbox removes it."""

    remove_webhook = forms.BooleanField(required=False, label=_("Remove the webhook (deliver reminders by email)"))

    class Meta:
        model = Profile
        fields = ["owner", "webhook_url", "remove_webhook"]
        widgets = {"webhook_url": forms.URLInput(attrs={"autocomplete": "off", "size": 60})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        saved = self.instance.webhook_url
        if saved:
            self.initial["webhook_url"] = ""
            self.fields["webhook_url"].help_text = gettext(
                "Set to %(origin)s/… (the rest is hidden). Leave blank to keep it, or enter a new URL to replace it."
            ) % {"origin": services.webhook_origin(url=saved)}
        else:
            del self.fields["remove_webhook"]

    def clean_webhook_url(self):
        url = self.cleaned_data["webhook_url"]
        if url:
            try:
                webhook_url_validate(url)
            except WebhookTargetRefused:
                raise forms.ValidationError(REFUSED.translated()) from None
        return url

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        if cleaned.get("remove_webhook"):
            cleaned["webhook_url"] = ""
        elif not cleaned.get("webhook_url") and "webhook_url" not in self.errors:
            cleaned["webhook_url"] = self.instance.webhook_url
        return cleaned


@admin.register(Profile)
class ProfileAdmin(StaffModelAdmin):
    form = ProfileForm
    list_display = ["owner", "webhook", "feed_token_rotated_at"]
    search_fields = ["owner__username", "owner__email"]
    readonly_fields = ["feed_url", "feed_token_rotated_at"]
    actions = ["rotate_feed_token"]

    def get_fields(self, request, obj=None):
        webhook = ["webhook_url", "remove_webhook"] if obj and obj.webhook_url else ["webhook_url"]
        return ["owner", *webhook, "feed_url", "feed_token_rotated_at"]

    @admin.display(description=_("webhook"))  # not sortable: the order of secrets is a hint about them
    def webhook(self, obj):
        # Only the origin in the list: a webhook URL's path, query or user info is often its secret.
        return services.webhook_origin(url=obj.webhook_url) if obj.webhook_url else "—"

    @admin.display(description=_("calendar feed URL"))
    def feed_url(self, obj):
        if not obj.pk:
            return gettext("(created on save)")
        return f"{settings.SITE_URL.rstrip('/')}{obj.feed_path}"

    @admin.action(description=_("Rotate the calendar feed URL (the old URL stops working)"), permissions=["change"])
    def rotate_feed_token(self, request, queryset):
        for profile in queryset:
            services.profile_rotate_feed_token(profile=profile)
        count = len(queryset)
        self.message_user(
            request,
            ngettext("Rotated %(count)d feed URL.", "Rotated %(count)d feed URLs.", count) % {"count": count},
            messages.SUCCESS,
        )


@admin.register(Contact)
class ContactAdmin(StaffModelAdmin):
    list_display = ["name", "public_id", "owner", "email", "phone", "preferred_platform"]
    list_filter = ["preferred_platform"]
    search_fields = ["name", "email", "phone", "public_id", "owner__username"]
    readonly_fields = ["public_id", "created_at"]
    list_select_related = ["owner"]


@admin.register(Event)
class EventAdmin(StaffModelAdmin):
    list_display = ["title", "public_id", "owner", "local_start", "duration_min", "location"]
    list_filter = [("start", admin.DateFieldListFilter)]
    search_fields = ["title", "public_id", "location", "owner__username"]
    readonly_fields = ["public_id", "created_at"]
    date_hierarchy = "start"
    list_select_related = ["owner"]

    @admin.display(description=_("start (as written)"), ordering="start")
    def local_start(self, obj):
        return moment_in(obj.start, zone_for(obj.tz))


@admin.register(Message)
class MessageAdmin(StaffModelAdmin):
    list_display = [
        "public_id",
        "owner",
        "contact",
        "platform",
        "status_badge",
        "failure_reason",
        "created_at",
        "sent_at",
    ]
    list_filter = ["status", "platform"]
    search_fields = ["public_id", "contact__name", "address", "owner__username"]
    list_select_related = ["owner", "contact"]
    readonly_fields = [
        "public_id",
        "owner",
        "contact",
        "platform",
        "address",
        "text",
        "status",
        "failure_reason",
        "attempts",
        "claimed_until",
        "created_at",
        "sent_at",
    ]
    actions = ["resend"]

    def has_add_permission(self, request):
        return False  # messages are sent by agents through message.send

    @admin.display(description=_("status"), ordering="status")
    def status_badge(self, obj):
        return _badge(obj)

    @admin.action(description=_("Resend selected failed messages"), permissions=["change"])
    def resend(self, request, queryset):
        done, refused = 0, []
        for message in queryset:
            try:
                services.message_resend(message=message)
                done += 1
            except ApplicationError as exc:
                refused.append(exc.human)
        if done:
            self.message_user(
                request,
                ngettext("Queued %(count)d message again.", "Queued %(count)d messages again.", done) % {"count": done},
                messages.SUCCESS,
            )
        for reason in refused:
            self.message_user(request, reason, messages.WARNING)


class DeliveryInline(admin.TabularInline):
    model = ReminderDelivery
    extra = 0
    can_delete = False
    fields = ["occurrence_at", "delivered_at", "channel", "status_badge", "late", "error"]
    readonly_fields = fields  # type: ignore[assignment]  # the same names (django-stubs types the two apart)
    ordering = ["-occurrence_at"]

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description=_("status"))
    def status_badge(self, obj):
        return _badge(obj)


@admin.register(Reminder)
class ReminderAdmin(StaffModelAdmin):
    list_display = ["public_id", "note", "owner", "next_fire", "repeat_rule", "is_active", "delivered_count"]
    list_filter = ["is_active", ("next_fire_at", admin.EmptyFieldListFilter)]
    search_fields = ["public_id", "note", "owner__username"]
    list_select_related = ["owner"]
    readonly_fields = [
        "public_id",
        "owner",
        "note",
        "time",
        "tz",
        "repeat_rule",
        "rrule",
        "next_fire_at",
        "claimed_until",
        "claimed_by",
        "attempts",
        "created_at",
    ]
    fields = [*readonly_fields[:8], "is_active", *readonly_fields[8:]]
    inlines = [DeliveryInline]

    def has_add_permission(self, request):
        return False  # reminders are created by agents through reminder.create

    def get_queryset(self, request):
        from django.db.models import Count

        return super().get_queryset(request).annotate(delivered=Count("deliveries"))

    @admin.display(description=_("next fire time"), ordering="next_fire_at")
    def next_fire(self, obj):
        if obj.next_fire_at is None:
            return gettext("— (finished)")
        return moment_in(obj.next_fire_at, obj.zone)

    @admin.display(description=_("repeat"), ordering="rrule")
    def repeat_rule(self, obj):
        return describe_rule(obj.rrule)

    @admin.display(description=_("deliveries"), ordering="delivered")
    def delivered_count(self, obj):
        return obj.delivered


@admin.register(ReminderDelivery)
class ReminderDeliveryAdmin(ReadOnlyModelAdmin):
    """Every delivered occurrence across reminders (the dashboard's failed deliveries open this list); written
    only by the scheduler, so read-only here."""

    list_display = ["delivered_at", "reminder", "occurrence_at", "channel", "status_badge", "late", "error"]
    list_filter = ["status", "channel", "late"]
    date_hierarchy = "delivered_at"
    search_fields = ["reminder__public_id", "error"]
    list_select_related = ["reminder"]

    @admin.display(description=_("status"), ordering="status")
    def status_badge(self, obj):
        return _badge(obj)
