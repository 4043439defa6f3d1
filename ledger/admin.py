"""Admin for accountants: chart of accounts, journal entries (posted = read-only), reversals, reports."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import DecimalField, Exists, OuterRef, Subquery, Sum
from django.forms.models import BaseInlineFormSet
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext, pgettext
from django.utils.translation import gettext_lazy as _

from mcpsite.admin_dates import date_range
from mcpsite.admin_export import CsvExportMixin, csv_response, xlsx_response
from mcpsite.admin_lists import BOUNDED_DATES_CHANGE_LIST, CappedCountPaginator, FoldedSearchMixin
from mcpsite.admin_pages import model_page
from mcpsite.admin_security import StaffModelAdmin
from mcpsite.core.errors import ApplicationError

from . import selectors, services
from .models import Account, AccountType, JournalEntry, JournalLine
from .services import LineInput


class ReportDateForm(forms.Form):
    as_of = forms.DateField(label=_("As of"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    start = forms.DateField(label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"}))


@admin.register(Account)
class AccountAdmin(StaffModelAdmin):
    list_display = ["code", "name", "type", "category", "is_active"]
    list_filter = ["type", "is_active", "category"]
    search_fields = ["code", "name", "category"]
    actions = ["activate", "deactivate"]
    change_list_template = "admin/ledger/account/change_list.html"

    def get_readonly_fields(self, request, obj=None):
        # Changing the code or type of an account with history would rewrite past reports.
        if obj is not None and obj.lines.exists():
            return ["code", "type"]
        return []

    def has_delete_permission(self, request, obj=None):
        # Only an account without history may go, and only for staff who may delete accounts at all.
        if not super().has_delete_permission(request, obj):
            return False
        return obj is None or not obj.lines.exists()

    @admin.action(description=_("Activate selected accounts"), permissions=["change"])
    def activate(self, request, queryset):
        for account in queryset:
            services.account_set_active(account=account, active=True)

    @admin.action(description=_("Deactivate selected accounts (their history is kept)"), permissions=["change"])
    def deactivate(self, request, queryset):
        for account in queryset:
            services.account_set_active(account=account, active=False)

    def get_urls(self):
        def view(report):
            # admin_view only asks for is_staff; the books are for staff who may view accounts.
            def checked(request, *args, **kwargs):
                if not self.has_view_permission(request):
                    raise PermissionDenied
                return report(request, *args, **kwargs)

            return self.admin_site.admin_view(checked)

        return [
            path("reports/balance-sheet/", view(self.balance_sheet_view), name="ledger_balance_sheet"),
            path("reports/income-statement/", view(self.income_statement_view), name="ledger_income_statement"),
            path("reports/trial-balance/", view(self.trial_balance_view), name="ledger_trial_balance"),
        ] + super().get_urls()

    def _report(self, request, template, title, csv=None, period=(), yen_columns=1, **context):
        """The report's page, or with `?format=csv` its lines as CSV (`csv`: header and rows). The file carries its
        `period` ((label, date) pairs: as of, or from and to) in its name and in the first columns of every row, so a
        filed copy says what it covers."""
        kind = request.GET.get("format")
        if csv is not None and kind in ("csv", "xlsx"):
            header, rows = csv
            name = "-".join([template, *(f"{day:%Y%m%d}" for _label, day in period)])
            labels, days = [label for label, _day in period], [day for _label, day in period]
            header, rows = [*labels, *header], ([*days, *row] for row in rows)
            if kind == "xlsx":  # the amounts (the last `yen_columns` columns) typed as yen
                return xlsx_response(f"{name}.xlsx", header, rows, yen=range(len(header) - yen_columns, len(header)))
            return csv_response(f"{name}.csv", header, rows)
        for kind in ("csv", "xlsx"):
            query = request.GET.copy()
            query["format"] = kind
            context[f"{kind}_url"] = f"?{query.urlencode()}"
        return model_page(self, request, f"admin/ledger/{template}.html", title=title, **context)

    @staticmethod
    def _section_rows(name: str, section) -> list[list]:
        rows = [[name, row.account.code, row.account.name, row.balance] for row in section.accounts]
        return [*rows, [name, "", gettext("Total"), section.total]]

    def _dates(self, request):
        form = ReportDateForm(request.GET or None)
        data = form.cleaned_data if form.is_valid() else {}
        today = timezone.localdate()
        return form, data, today

    def balance_sheet_view(self, request):
        form, data, today = self._dates(request)
        as_of = data.get("as_of") or today
        sheet = selectors.balance_sheet(as_of=as_of)
        rows = [
            *self._section_rows(gettext("Assets"), sheet.assets),
            *self._section_rows(gettext("Liabilities"), sheet.liabilities),
            [gettext("Equity"), "", gettext("Retained earnings to date (revenue − expenses)"), sheet.retained_earnings],
            *self._section_rows(gettext("Equity"), sheet.equity),
        ]
        return self._report(
            request,
            "balance_sheet",
            gettext("Balance sheet"),
            csv=(self._section_header(), rows),
            period=[(gettext("As of"), as_of)],
            form=form,
            as_of=as_of,
            sheet=sheet,
        )

    @staticmethod
    def _section_header() -> list[str]:
        return [gettext("Section"), gettext("Code"), gettext("Account"), gettext("Balance")]

    def income_statement_view(self, request):
        form, data, today = self._dates(request)
        # By default the fiscal year (April–March) the dashboard opens on, up to today; with only an end date, the
        # fiscal year up to that day.
        if data.get("end") is None and data.get("start") is None:
            start, end = selectors.fiscal_year_bounds(year=selectors.default_fiscal_year(today=today))
            end = min(end, today)
        else:
            end = data.get("end") or today
            start = data.get("start") or selectors.fiscal_year_bounds(year=selectors.fiscal_year_of(day=end))[0]
        error = gettext("The start date is after the end date.") if start > end else None
        statement = None if error else selectors.income_statement(start=start, end=end)
        rows = (
            []
            if statement is None
            else [
                *self._section_rows(gettext("Revenue"), statement.revenue),
                *self._section_rows(gettext("Expenses"), statement.expenses),
                ["", "", gettext("Net income"), statement.net_income],
            ]
        )
        return self._report(
            request,
            "income_statement",
            gettext("Income statement"),
            csv=None if error else (self._section_header(), rows),
            period=[(gettext("From"), start), (gettext("To"), end)],
            form=form,
            start=start,
            end=end,
            statement=statement,
            error=error,
        )

    def trial_balance_view(self, request):
        form, data, today = self._dates(request)
        as_of = data.get("as_of") or today
        tb = selectors.trial_balance(as_of=as_of)
        header = [
            gettext("Code"),
            gettext("Account"),
            pgettext("account type", "Type"),
            gettext("Debit total"),
            gettext("Credit total"),
            gettext("Balance"),
        ]
        rows = [
            [r.account.code, r.account.name, r.account.get_type_display(), r.debit, r.credit, r.balance]
            for r in tb.rows
        ]
        rows.append(["", gettext("Total"), "", tb.debit_total, tb.credit_total, ""])
        return self._report(
            request, "trial_balance", gettext("Trial balance"), csv=(header, rows), period=[(gettext("As of"), as_of)],
            yen_columns=3, form=form, as_of=as_of, tb=tb,
        )  # fmt: skip


class JournalLineFormSet(BaseInlineFormSet):
    """Validates the whole entry with the service's rules, so an unbalanced entry never gets saved."""

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        lines = [
            LineInput(
                account_code=f.cleaned_data["account"].code,
                debit=f.cleaned_data.get("debit") or Decimal(0),
                credit=f.cleaned_data.get("credit") or Decimal(0),
            )
            for f in self.forms
            if f.cleaned_data.get("account") and not f.cleaned_data.get("DELETE")
        ]
        try:
            services.journal_lines_validate(lines=lines)
            services.journal_balance_validate(lines=lines)
        except ApplicationError as exc:
            raise ValidationError(exc.human) from None
        self.lines = lines


class JournalLineInline(admin.TabularInline):
    model = JournalLine
    formset = JournalLineFormSet
    fields = ["account", "debit", "credit"]
    can_delete = False

    def get_extra(self, request, obj=None, **kwargs):
        return 0 if obj else 4

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        # A tabular row's inputs have no <label> of their own (the column heading names them): name each one.
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is not None:
            field.widget.attrs.setdefault("aria-label", db_field.verbose_name)
        return field

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request, obj=None):
        return obj is None

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "account":
            kwargs["queryset"] = Account.objects.filter(is_active=True).order_by("code")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class AccountTypeFilter(admin.SimpleListFilter):
    """Entries with a line on an account of the chosen type (the dashboard's monthly revenue and expenses open
    this). An EXISTS per entry, not a join on the lines: a join would list an entry once per line; and not an
    `IN (every matching line)`, which would read all of them before the first page."""

    title = _("account type")
    parameter_name = "account_type"

    def lookups(self, request, model_admin):
        return AccountType.choices

    def queryset(self, request, queryset):
        if self.value() not in AccountType.values:
            return queryset
        return queryset.filter(Exists(JournalLine.objects.filter(entry=OuterRef("pk"), account__type=self.value())))


class AccountFilter(admin.SimpleListFilter):
    """Entries with a line on one account (by code): a report line's drill-down opens this with its period. An
    EXISTS, like the account type's."""

    title = _("account")
    parameter_name = "account"

    def lookups(self, request, model_admin):
        return [(code, f"{code} {name}") for code, name in Account.objects.order_by("code").values_list("code", "name")]

    def queryset(self, request, queryset):
        if not self.value():
            return queryset
        # By the account's id, not its code joined inside the EXISTS: with the join PostgreSQL counts the capped
        # page count through a hash of every line of the account; with the id it walks the (account, entry) index
        # in entry order beside the entries and stops at the cap.
        ids = list(Account.objects.filter(code=self.value()).values_list("pk", flat=True))
        return queryset.filter(Exists(JournalLine.objects.filter(entry=OuterRef("pk"), account_id__in=ids)))


@admin.register(JournalEntry)
class JournalEntryAdmin(FoldedSearchMixin, CsvExportMixin, StaffModelAdmin):
    list_display = ["date", "description", "amount", "created_by", "reversal_of", "is_reversed"]
    list_filter = ["date", date_range("date"), AccountTypeFilter, AccountFilter]
    search_fields = ["description", "=id"]
    folded_search_key = "search_key"  # the description folded: ｶﾞｽ finds ガス代
    date_hierarchy = "date"
    # At a million lines (bench/bench_staff_pages.py): the date hierarchy from the first and last date, not a
    # DISTINCT over every entry; one count, capped, not a second one of every entry beside a filtered list's.
    change_list_template = BOUNDED_DATES_CHANGE_LIST
    show_full_result_count = False
    paginator = CappedCountPaginator
    fields = ["date", "description", "created_by", "reversal_of"]
    readonly_fields = ["created_by", "reversal_of"]
    inlines = [JournalLineInline]
    actions = ["reverse_entries"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("created_by", "reversal_of")
            # Each listed entry's amount and whether it is reversed: subqueries evaluated for the page's rows only
            # (a SUM over a join with the lines would group every entry before the page is cut, and SQLite's
            # planner scans the entries for a join on the mostly empty `reversal_of` once ANALYZE has run).
            .annotate(
                reversed=Exists(JournalEntry.objects.filter(reversal_of=OuterRef("pk"))),
                debit_total=Subquery(
                    JournalLine.objects.filter(entry=OuterRef("pk"))
                    .order_by()
                    .values("entry")
                    .annotate(total=Sum("debit"))
                    .values("total"),
                    output_field=DecimalField(max_digits=20, decimal_places=2),
                ),
            )
        )

    export_yen_columns = [5, 6]  # debit, credit

    def export_rows(self, queryset):
        """One row per line of the listed entries (an entry's lines together, in date order)."""
        return selectors.journal_lines_export(entries=queryset)

    @admin.display(description=_("amount"))
    def amount(self, obj):
        return services.yen(obj.debit_total or Decimal(0))

    @admin.display(description=_("reversed"), boolean=True)
    def is_reversed(self, obj):
        return obj.reversed

    def has_change_permission(self, request, obj=None):
        # Posted entries are immutable: the change page is read-only; correct with a reversal.
        return obj is None and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return False

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # No outer transaction here (ModelAdmin wraps one): the posting service owns its durable
        # transaction, and a read-only change page writes nothing.
        return self._changeform_view(request, object_id, form_url, extra_context)  # type: ignore[attr-defined]

    def save_model(self, request, obj, form, change):
        """Nothing yet: the entry and its lines are posted together in save_related."""

    def save_related(self, request, form, formsets, change):
        entry = services.journal_entry_create(
            date=form.cleaned_data["date"],
            description=form.cleaned_data["description"],
            lines=formsets[0].lines,
            actor=request.user,
        )
        obj = form.instance
        for field in entry._meta.concrete_fields:
            setattr(obj, field.attname, getattr(entry, field.attname))
        obj._state.adding = False
        for formset in formsets:  # what the admin's change message reads after a formset save
            formset.new_objects, formset.changed_objects, formset.deleted_objects = list(entry.lines.all()), [], []

    # A reversal is a new entry: the right to post entries is the right to reverse them.
    @admin.action(description=_("Reverse selected entries (posts an opposite entry)"), permissions=["add"])
    def reverse_entries(self, request, queryset):
        for entry in queryset.order_by("date", "created_at"):
            try:
                reversal = services.journal_entry_reverse(entry_id=entry.pk, actor=request.user)
            except ApplicationError as exc:
                self.message_user(request, f"{entry}: {exc.human}", messages.ERROR)
            else:
                url = reverse("admin:ledger_journalentry_change", args=[reversal.pk])
                self.message_user(
                    request,
                    gettext("Reversed %(entry)s (reversal entry %(url)s)") % {"entry": entry, "url": url},
                    messages.SUCCESS,
                )
