"""Reading the admin's CSV exports in tests (mcpsite/admin_export.py)."""

from __future__ import annotations

import csv
import io

from django.http import StreamingHttpResponse


def read_csv(response) -> list[list[str]]:
    """The rows of a streamed CSV export, after checking it streams and starts with the UTF-8 byte-order mark."""
    assert response.status_code == 200, response.status_code
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    body = b"".join(response.streaming_content).decode("utf-8")
    assert body.startswith("\ufeff")
    return list(csv.reader(io.StringIO(body[1:])))


def read_xlsx(response):
    """The rows of an XLSX export as openpyxl reads them (typed values), and the sheet for formats."""
    from openpyxl import load_workbook

    assert response.status_code == 200, response.status_code
    assert response["Content-Type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    sheet = load_workbook(io.BytesIO(b"".join(response.streaming_content))).active
    return [list(row) for row in sheet.iter_rows(values_only=True)], sheet
