"""CSV exports of admin changelists: what the list shows (its filters, search and ordering), streamed.

A ModelAdmin mixes in `CsvExportMixin` and names its columns (`export_columns`: header, value path) or overrides
`export_rows` (a JOIN to child rows, an aggregate). The export answers at `<changelist>/export.csv` with the list's
query string, to staff with the list's view permission (403 otherwise), as UTF-8 with a byte-order mark (so Excel
reads the Japanese) in a StreamingHttpResponse that reads the rows in chunks from a database iterator (a
server-side cursor on PostgreSQL): memory stays flat whatever the row count (bench/bench_export.py measures
1,000,000 journal lines). docs/decisions/0011-csv-exports.md says why this is ours rather than
django-import-export's.
"""

from __future__ import annotations

import csv
import datetime
import unicodedata
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.contrib.admin import ModelAdmin
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import FileResponse, HttpRequest, StreamingHttpResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext

CHUNK_ROWS = 2000
BOM = "\ufeff"
# A cell starting with one of these is a formula to a spreadsheet: quoted with an apostrophe (OWASP CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Spreadsheets also read a formula after leading spaces (a full-width 　 too) and from the full-width signs
# ＝ ＋ － ＠, which they normalise: the first character after any whitespace, NFKC-folded, decides.
_FORMULA_SIGNS = ("=", "+", "-", "@")


def is_formula(text: str) -> bool:
    """Whether a spreadsheet may run `text` as a formula: see FORMULA_STARTS and _FORMULA_SIGNS."""
    return text.startswith(FORMULA_STARTS) or unicodedata.normalize("NFKC", text.lstrip()[:1]).startswith(
        _FORMULA_SIGNS
    )


class _Echo:
    """csv.writer's file: hands back each written line instead of storing it."""

    def write(self, value: str) -> str:
        return value


def cell(value: Any) -> str:
    """One value as a spreadsheet reads it: local times, plain decimals, text that cannot run as a formula."""
    if value is None:
        return ""
    if isinstance(value, datetime.datetime):
        return timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S") if timezone.is_aware(value) else str(value)
    if isinstance(value, bool):
        return gettext("Yes") if value else gettext("No")  # a word a person files, in the page's language
    if isinstance(value, Decimal | int | float | datetime.date | datetime.time):
        return str(value)
    text = str(value)
    return "'" + text if is_formula(text) else text


def csv_lines(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> Iterator[str]:
    """The BOM and the header, then one CSV line per row."""
    writer = csv.writer(_Echo())
    yield BOM + writer.writerow([str(h) for h in header])
    for row in rows:
        yield writer.writerow([cell(v) for v in row])


def export_refused(request: HttpRequest):
    """A list's export with a filter value the list refuses: a 400 page in the admin's chrome that says so."""
    from .admin_pages import bad_address

    return bad_address(request)


def csv_response(filename: str, header: Iterable[str], rows: Iterable[Iterable[Any]]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(csv_lines(header, rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# The spreadsheet's yen: thousands separated, no decimals unless the amount has them.
YEN_FORMAT = '"¥"#,##0;-"¥"#,##0'
YEN_FORMAT_CENTS = '"¥"#,##0.00;-"¥"#,##0.00'
XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def xlsx_cell(value: Any, *, yen: bool = False) -> Any:
    """One value typed for a spreadsheet: numbers, dates and times as themselves (yen with the yen format), booleans
    and text as `cell` writes them (text is never a formula)."""
    if isinstance(value, bool) or value is None:
        return cell(value)
    if isinstance(value, datetime.datetime):
        return timezone.localtime(value).replace(tzinfo=None) if timezone.is_aware(value) else value
    if isinstance(value, Decimal | int | float) and yen:
        return value
    if isinstance(value, Decimal | int | float | datetime.date | datetime.time):
        return value
    return cell(value)


def xlsx_response(filename: str, header: Iterable[str], rows: Iterable[Iterable[Any]], *, yen: Iterable[int] = ()):
    """The rows as an XLSX workbook written in openpyxl's write-only mode (rows go to a temporary file as they come,
    so memory stays flat), columns `yen` formatted as yen. Same rules as the CSV: typed values, no formulas."""
    import tempfile

    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell

    yen_columns = set(yen)
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet()
    sheet.append([str(h) for h in header])
    for row in rows:
        cells = []
        for index, value in enumerate(row):
            typed = WriteOnlyCell(sheet, value=xlsx_cell(value, yen=index in yen_columns))
            if isinstance(typed.value, str):
                typed.data_type = "s"  # text stays text, whatever it starts with
            elif index in yen_columns and isinstance(value, Decimal | int):
                typed.number_format = YEN_FORMAT if value == int(value) else YEN_FORMAT_CENTS
            cells.append(typed)
        sheet.append(cells)
    spool = tempfile.TemporaryFile()  # noqa: SIM115  # the FileResponse closes it when sent
    workbook.save(spool)
    spool.seek(0)
    return FileResponse(spool, as_attachment=True, filename=filename, content_type=XLSX_TYPE)


def field_of(model, path: str):
    """The model field at the end of a values() path ("schedule__movie__title")."""
    *relations, name = path.split("__")
    for relation in relations:
        model = model._meta.get_field(relation).related_model
    return model._meta.get_field(name)


def labelled_rows(model, paths: list[str], rows: Iterable[tuple]) -> Iterator[list[Any]]:
    """Rows of values() with each choice field's value given as its label, as the list shows it."""
    choices = {i: dict(field.flatchoices) for i, p in enumerate(paths) if (field := field_of(model, p)).choices}
    for row in rows:
        yield [choices[i].get(v, v) if i in choices else v for i, v in enumerate(row)]


if TYPE_CHECKING:
    _ModelAdmin = ModelAdmin
else:
    _ModelAdmin = object  # a mixin: the ModelAdmin it is mixed into provides these


class CsvExportMixin(_ModelAdmin):
    """Adds `<changelist>/export.csv` to a ModelAdmin (see the module's docstring)."""

    # values() paths; each header is its field's name, or given as (path, header) where the name alone is ambiguous
    # in the file (two "public ID"s, a bare "name").
    export_columns: list[str | tuple[str, Any]] = []
    export_annotations: dict[str, tuple[Any, Any]] = {}  # more columns: name -> (header, expression)

    def export_rows(self, queryset: QuerySet) -> tuple[list[Any], Iterable[Iterable[Any]]]:
        """(header, rows) for the changelist's `queryset`; by default its `export_columns` and annotations."""
        paths = [c if isinstance(c, str) else c[0] for c in self.export_columns]
        extra = self.export_annotations
        named = [field_of(self.model, c).verbose_name if isinstance(c, str) else c[1] for c in self.export_columns]
        header = named + [h for h, _e in extra.values()]
        queryset = queryset.prefetch_related(None).annotate(**{name: e for name, (_h, e) in extra.items()})
        rows = queryset.values_list(*paths, *extra).iterator(chunk_size=CHUNK_ROWS)
        return header, labelled_rows(self.model, paths, rows)

    export_yen_columns: list[int] = []  # indexes of the export's yen columns (typed and formatted in the XLSX)

    def get_urls(self):
        opts = self.model._meta
        name = f"{opts.app_label}_{opts.model_name}_export"
        csv_view = self.admin_site.admin_view(self.export_view)
        xlsx_view = self.admin_site.admin_view(self.export_view)
        return [
            path("export.csv", csv_view, name=name),
            path("export.xlsx", xlsx_view, {"kind": "xlsx"}, name=f"{name}_xlsx"),
            *super().get_urls(),
        ]

    def export_view(self, request: HttpRequest, kind: str = "csv"):
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            return export_refused(request)
        header, rows = self.export_rows(changelist.get_queryset(request))
        stamp = timezone.localtime().strftime("%Y%m%d-%H%M")
        name = f"{self.model._meta.model_name}-{stamp}"
        if kind == "xlsx":
            return xlsx_response(f"{name}.xlsx", header, rows, yen=self.export_yen_columns)
        return csv_response(f"{name}.csv", header, rows)

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None):
        # The list's "Export CSV" button (templates/admin/change_list_object_tools.html), with its filters.
        opts = self.model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_export", current_app=self.admin_site.name)
        query = request.GET.copy()
        query.pop("p", None)  # every page, not the one shown
        suffix = f"?{query.urlencode()}" if query else ""
        context = {"csv_export_url": url + suffix}
        if self.export_yen_columns:  # where typed yen help a spreadsheet, the same rows as XLSX
            context["xlsx_export_url"] = url.removesuffix("csv") + "xlsx" + suffix
        context.update(extra_context or {})
        return super().changelist_view(request, extra_context=context)
