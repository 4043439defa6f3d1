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
