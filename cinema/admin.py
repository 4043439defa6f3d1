"""Staff admin: films, theaters with a seat-layout builder, shows with a seat map, reservations.

Declarations only; the layout builder and the cancel action call the same services as the tools.
Reservations are history: staff cancel them (recorded: who, when) but never edit them.
"""

from __future__ import annotations

import datetime
import json

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.widgets import AdminTimeWidget
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404
from django.urls import path
from django.utils import formats, timezone, translation
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from mcpsite.admin_dates import date_range, opens_at_today
from mcpsite.admin_export import CsvExportMixin
from mcpsite.admin_lists import BOUNDED_DATES_CHANGE_LIST, FoldedSearchMixin
from mcpsite.admin_pages import model_page
from mcpsite.admin_security import StaffModelAdmin
from mcpsite.core.errors import ApplicationError
from mcpsite.formats import TIME_INPUT_FORMAT

from . import selectors, services
from .models import Movie, Reservation, Schedule, Theater


def _film_title(title: str):
    """A film's title in a list: one line, cut with an ellipsis when long (the whole title is its tooltip)."""
    return format_html('<span class="cinema-title" title="{}">{}</span>', title, title)


@admin.register(Movie)
class MovieAdmin(StaffModelAdmin):
    list_display = ["public_id", "title", "genre", "duration", "rating", "release_date"]
    search_fields = ["public_id", "title", "title_key"]
    list_filter = ["genre"]
    readonly_fields = ["public_id"]
    fields = ["public_id", "title", "genre", "duration", "rating", "description", "release_date"]


# --- theaters: the seat-layout builder --------------------------------------------------------


class SeatGridWidget(forms.CheckboxSelectMultiple):
    """Checkboxes laid out as the theater's seat grid (ticked = blocked). `seat_states` marks seats that cannot be
    ticked here: "reserved" (sold at the show) and "theater" (blocked for every show of the theater)."""

    template_name = "admin/cinema/widgets/seat_grid.html"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seat_states: dict[str, str] = {}
        self.kept: list[str] = []  # ticked seats whose boxes cannot be changed (a browser sends no disabled box)

    def value_from_datadict(self, data, files, name):
        return [*super().value_from_datadict(data, files, name), *self.kept]

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        option["state"] = self.seat_states.get(str(value), "")
        if option["state"]:
            option["attrs"]["disabled"] = True
        return option

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        rows: dict[str, list] = {}
        for _group, options, _index in context["widget"]["optgroups"]:
            for option in options:
                rows.setdefault(option["value"][0], []).append(option)
        context["widget"]["seat_rows"] = list(rows.items())
        return context


class TheaterForm(forms.ModelForm):
    blocked_seats = forms.MultipleChoiceField(
        required=False,
        widget=SeatGridWidget,
        label=_("Blocked seats"),
        help_text=_("Tick the seats that are not for sale. After changing rows or columns, save to see the new grid."),
    )

    class Meta:
        model = Theater
        fields = ["name", "rows", "columns"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            seats = list(self.instance.seats.order_by("row", "column").values_list("label", "blocked"))
            self.fields["blocked_seats"].choices = [(label, label) for label, _blocked in seats]  # type: ignore[attr-defined]  # a MultipleChoiceField
            self.fields["blocked_seats"].initial = [label for label, blocked in seats if blocked]
        else:
            self.fields["blocked_seats"].help_text = _("Save the theater first; then tick the seats to block.")

    def clean(self):
        super().clean()
        data = self.cleaned_data
        if self.errors:
            return data
        try:
            wanted = services.theater_layout_validate(
                theater=self.instance if self.instance.pk else None, rows=data["rows"], columns=data["columns"]
            )
        except ApplicationError as exc:
            raise forms.ValidationError(exc.human) from None
        # Ticks of seats that a shrink removes are dropped, not refused.
        data["blocked_seats"] = set(data.get("blocked_seats") or []) & wanted.keys()
        return data


@admin.register(Theater)
class TheaterAdmin(StaffModelAdmin):
    form = TheaterForm
    list_display = ["public_id", "name", "rows", "columns", "seat_count", "blocked_count"]
    search_fields = ["public_id", "name"]
    readonly_fields = ["public_id"]
    fields = ["public_id", "name", "rows", "columns", "blocked_seats"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(n_seats=Count("seats"), n_blocked=Count("seats", filter=Q(seats__blocked=True)))
        )

    @admin.display(description=_("seats"), ordering="n_seats")
    def seat_count(self, obj):
        return obj.n_seats

    @admin.display(description=_("blocked"), ordering="n_blocked")
    def blocked_count(self, obj):
        return obj.n_blocked

    def get_urls(self):
        view = self.admin_site.admin_view(self.day_sheet_view)
        return [path("<int:pk>/day-sheet/", view, name="cinema_theater_day_sheet"), *super().get_urls()]

    def day_sheet_view(self, request, pk: int):
        """The theater's shows of one day (`?date=`, today by default), one printed page each."""
        theater = get_object_or_404(Theater, pk=pk)
        if not all(request.user.has_perm(f"cinema.view_{m}") for m in ("theater", "schedule", "reservation")):
            raise PermissionDenied
        try:
            date = datetime.date.fromisoformat(request.GET.get("date", ""))
        except ValueError:
            date = timezone.localdate()
        title = gettext("Day sheet of %(theater)s, %(date)s") % {
            "theater": theater.name,
            "date": formats.date_format(date, "DATE_FORMAT"),
        }
        return model_page(
            self,
            request,
            "admin/cinema/print_sheets.html",
            title=title,
            sheets=selectors.day_sheets(theater=theater, date=date),
            original=theater,
            theater=theater,
            previous_day=date - datetime.timedelta(days=1) if date > datetime.date.min else None,
            next_day=date + datetime.timedelta(days=1) if date < datetime.date.max else None,
        )

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        services.theater_set_layout(
            theater=obj, rows=obj.rows, columns=obj.columns, blocked=form.cleaned_data["blocked_seats"]
        )


# --- schedules: the seat map ------------------------------------------------------------------


class ScheduleForm(forms.ModelForm):
    """A show's form, checked by the service's rules (no show in the past, no overlap, sold shows stay put), with
    the seats blocked for this show alone (the theater's seat grid: sold seats and the theater's blocks are shown,
    not ticked here)."""

    blocked_seats = forms.MultipleChoiceField(
        required=False,
        widget=SeatGridWidget,
        label=_("Seats blocked for this show"),
        help_text=_(
            "Tick the seats not for sale at this show only (a broken seat, a seat held for a guest). Red: reserved. "
            "Striped: blocked for every show of the theater (on the theater's page)."
        ),
    )

    class Meta:
        model = Schedule
        fields = ["movie", "theater", "date", "start_time", "end_time"]
        # Shows start on the minute: the times are written without seconds.
        widgets = {name: AdminTimeWidget(format=TIME_INPUT_FORMAT) for name in ("start_time", "end_time")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["blocked_seats"]
        if self.instance.pk is None:
            field.help_text = _("Save the show first; then tick the seats to block for it.")
            return
        grid = selectors.show_seat_grid(schedule=self.instance)
        field.choices = [(label, label) for label in grid.labels]  # type: ignore[attr-defined]  # a MultipleChoiceField
        field.initial = grid.show_blocked
        field.widget.seat_states = grid.states
        # A seat blocked for the show and then for the theater keeps its block.
        field.widget.kept = [label for label in grid.show_blocked if label in grid.states]

    def clean(self):
        data = super().clean() or {}
        if self.errors:
            return data
        candidate = Schedule(
            pk=self.instance.pk,
            public_id=self.instance.public_id,
            **{name: data.get(name) for name in ScheduleForm.Meta.fields},
        )
        try:
            services.schedule_validate(schedule=candidate)
            if self.instance.pk is not None and "blocked_seats" in self.changed_data:
                if candidate.theater_id != self.instance.theater_id:
                    raise forms.ValidationError(
                        _("Save the show in its new theater first; then block seats for it."), code="theater"
                    )
                services.show_seat_blocks_validate(schedule=self.instance, seats=data["blocked_seats"])
        except ApplicationError as exc:
            raise forms.ValidationError(exc.human) from None
        return data


@admin.register(Schedule)
class ScheduleAdmin(StaffModelAdmin):
    form = ScheduleForm
    list_display = ["public_id", "date", "start_time", "end_time", "film", "theater", "sold"]
    # Opens on today's and the coming shows (the oldest are years back); the date hierarchy reaches the past.
    list_filter = [opens_at_today("date", _("show day")), date_range("date"), "theater", "movie"]
    date_hierarchy = "date"
    change_list_template = BOUNDED_DATES_CHANGE_LIST  # no DISTINCT over every show's date
    search_fields = ["public_id", "movie__title"]
    list_select_related = ["movie", "theater"]
    autocomplete_fields = ["movie"]
    readonly_fields = ["public_id"]
    fields = ["public_id", "movie", "theater", "date", "start_time", "end_time", "blocked_seats"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_sold=selectors.schedule_sold_expression())

    class Media:
        css = {"all": ["cinema/admin-lists.css"]}

    @admin.display(description=_("movie"), ordering="movie__title")
    def film(self, obj):
        return _film_title(obj.movie.title)

    @admin.display(description=_("sold"), ordering="n_sold")
    def sold(self, obj):
        return obj.n_sold

    def get_urls(self):
        printed = self.admin_site.admin_view(self.print_view)
        holders = self.admin_site.admin_view(self.holders_view)
        return [
            path("<int:pk>/print/", printed, name="cinema_schedule_print"),
            path("<int:pk>/holders/", holders, name="cinema_schedule_holders"),
            *super().get_urls(),
        ]

    def _show_with_names(self, request, pk: int) -> Schedule:
        """The show, for staff who may view it and its reservations (its pages name customers)."""
        schedule = get_object_or_404(Schedule.objects.select_related("movie", "theater"), pk=pk)
        if not (self.has_view_permission(request, schedule) and request.user.has_perm("cinema.view_reservation")):
            raise PermissionDenied
        return schedule

    def holders_view(self, request, pk: int):
        """Who holds (or held) each seat of the show, searchable by seat, reservation id or name (`?q=`)."""
        schedule = self._show_with_names(request, pk)
        query = request.GET.get("q", "")[:200]
        title = gettext("Seat holders of %(show)s") % {"show": schedule.public_id}
        return model_page(
            self,
            request,
            "admin/cinema/schedule/holders.html",
            title=title,
            original=schedule,
            query=query,
            holders=selectors.show_seat_holders(schedule=schedule, query=query),
        )

    def print_view(self, request, pk: int):
        """The show's seat map and who holds each seat, for paper (the names need the reservations' view right)."""
        schedule = self._show_with_names(request, pk)
        sheets = [selectors.show_sheet(schedule=schedule)]
        title = gettext("Seat map of %(show)s") % {"show": schedule.public_id}
        return model_page(
            self, request, "admin/cinema/print_sheets.html", title=title, sheets=sheets, original=schedule
        )

    def save_model(self, request, obj, form, change):
        services.schedule_save(schedule=obj)
        if change and "blocked_seats" in form.changed_data:
            services.show_seat_blocks_set(schedule=obj, seats=form.cleaned_data["blocked_seats"], actor=request.user)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # The seat map under the form (admin/cinema/schedule/change_form.html); a reserved seat links to its
        # reservation for staff who may view reservations.
        if obj is not None:
            context["seat_map"] = selectors.seat_map_get(schedule=obj)
            context["reservation_links"] = request.user.has_perm("cinema.view_reservation")
        return super().render_change_form(request, context, add, change, form_url, obj)


# --- reservations -----------------------------------------------------------------------------


def cancel_log_message() -> str:
    """The history's record of a staff cancellation, in Django's own form: the fields it changed, named in the
    source language and shown in each reader's (LogEntry.get_change_message translates them)."""
    with translation.override(None):
        fields = [
            str(Reservation._meta.get_field(name).verbose_name)  # type: ignore[union-attr]  # concrete fields
            for name in ("status", "cancelled_at", "cancel_source", "cancelled_by")
        ]
    return json.dumps([{"changed": {"fields": fields}}])


@admin.register(Reservation)
class ReservationAdmin(FoldedSearchMixin, CsvExportMixin, StaffModelAdmin):
    export_columns = [
        ("public_id", _("reservation ID")),
        "customer_name",
        ("schedule__public_id", _("show ID")),
        ("schedule__date", _("show date")),
        ("schedule__start_time", _("start time")),
        ("schedule__movie__title", _("film title")),
        ("schedule__theater__name", _("theater name")),
        "status",
        "reserved_at",
        "cancelled_at",
    ]
    export_annotations = {
        "seat_labels": (pgettext_lazy("seat labels", "seats"), selectors.reservation_seat_labels_expression())
    }

    def export_rows(self, queryset):
        header, rows = super().export_rows(queryset)
        return header, ([*row[:-1], selectors.seat_labels_sorted(labels=row[-1] or "")] for row in map(list, rows))

    list_display = [
        "public_id",
        "customer_name",
        "show",
        "seat_list",
        "status",
        "reserved_at",
        "cancel_source",
        "cancelled_by",
    ]
    list_filter = ["status", "schedule__date", date_range("reserved_at"), "cancel_source", "schedule__theater"]
    search_fields = ["public_id", "customer_name"]
    folded_search_key = "customer_key"  # ﾃﾞﾓ and でも find デモ顧客
    date_hierarchy = "reserved_at"
    change_list_template = BOUNDED_DATES_CHANGE_LIST  # no DISTINCT over every reservation's date
    list_select_related = ["schedule__movie", "schedule__theater", "cancelled_by"]
    actions = ["cancel_reservations"]
    # The password hash is never shown: staff need no password and a hash must not leak.
    fields = [
        "public_id",
        "schedule",
        "customer_name",
        "seat_list",
        "status",
        "reserved_at",
        "cancelled_at",
        "cancel_source",
        "cancelled_by",
    ]
    readonly_fields = fields  # type: ignore[assignment]  # the same names (django-stubs types the two apart)

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("seats__seat")

    def has_add_permission(self, request):
        return False  # bookings are made through the tools (one path: the reservation service)

    def has_delete_permission(self, request, obj=None):
        return False  # history is corrected by cancelling, not deleting

    class Media:
        css = {"all": ["cinema/admin-lists.css"]}

    @admin.display(description=_("show"), ordering="schedule__date")
    def show(self, obj):
        s = obj.schedule
        return format_html("{} {} / {}", str(s), _film_title(s.movie.title), s.theater.name)

    @admin.display(description=pgettext_lazy("seat labels", "seats"))
    def seat_list(self, obj):
        labels = sorted((rs.seat.row, rs.seat.column) for rs in obj.seats.all())
        return format_html("{}", ", ".join(f"{row}{column}" for row, column in labels))

    @admin.action(description=_("Cancel selected reservations (frees their seats)"), permissions=["change"])
    def cancel_reservations(self, request, queryset):
        """First a page that says what cancelling does and asks to confirm; its Yes posts the action again."""
        if request.POST.get("post") != "yes":
            return self.cancel_confirmation(request, queryset)
        done, refused = 0, []
        for reservation in queryset:
            try:
                services.reservation_cancel(
                    reservation=reservation, source=Reservation.Source.STAFF, actor=request.user
                )
            except ApplicationError as exc:
                refused.append(f"{reservation.public_id}: {exc.human}")
                continue
            self.log_change(request, reservation, cancel_log_message())
            done += 1
        if done:
            self.message_user(
                request,
                ngettext(
                    "Cancelled %(count)d reservation; its seats are free again.",
                    "Cancelled %(count)d reservations; their seats are free again.",
                    done,
                )
                % {"count": done},
            )
        for message in refused:
            self.message_user(request, message, level=messages.WARNING)

    def cancel_confirmation(self, request, queryset):
        chosen = list(queryset)
        live = [r for r in chosen if r.status == Reservation.Status.CONFIRMED]
        return model_page(
            self,
            request,
            "admin/cinema/reservation/cancel_confirmation.html",
            title=gettext("Cancel reservations"),
            reservations=[
                {
                    "pk": r.pk,
                    "public_id": r.public_id,
                    "customer_name": r.customer_name,
                    "show": self.show(r),
                    "seats": self.seat_list(r),
                }
                for r in live
            ],  # fmt: skip
            already=[r.public_id for r in chosen if r.status != Reservation.Status.CONFIRMED],
            action_checkbox_name=helpers.ACTION_CHECKBOX_NAME,
        )
