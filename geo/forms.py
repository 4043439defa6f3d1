"""The admin's paste/CSV form: lines of `lat,lon[,ref]` -> the seed's points.

Only the text format is checked here (numbers that parse, 2 or 3 columns); ranges and refs are
checked by the same code the MCP tool uses (points.parse_points), so staff and agents get the same
answers for the same points.
"""

from __future__ import annotations

import csv
import io
import math

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from .models import Granularity

MAX_UPLOAD_BYTES = 2_000_000
HEADER_WORDS = {"lat", "latitude", "緯度"}


def _number(text: str, what: str, line: int) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValidationError(
            gettext("Line %(line)d: %(what)s %(text)r is not a number")
            % {"line": line, "what": what, "text": text.strip()}
        ) from None
    if not math.isfinite(value):
        raise ValidationError(gettext("Line %(line)d: %(what)s must be a finite number") % {"line": line, "what": what})
    return value


def parse_rows(rows) -> list[dict]:
    """Rows of [lat, lon, ref?] (a header row naming lat is skipped) -> [{ref?, lat, lon}]."""
    points = []
    for line, row in enumerate(rows, start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells) or cells[0].startswith("#"):
            continue
        if line == 1 and cells[0].lower() in HEADER_WORDS:
            continue
        if len(cells) < 2 or len(cells) > 3:
            raise ValidationError(
                gettext("Line %(line)d: expected lat,lon[,ref], got %(count)d columns")
                % {"line": line, "count": len(cells)}
            )
        point = {"lat": _number(cells[0], "lat", line), "lon": _number(cells[1], "lon", line)}
        if len(cells) == 3 and cells[2]:
            point = {"ref": cells[2], **point}
        points.append(point)
    return points


class ResolvePointsForm(forms.Form):
    granularity = forms.ChoiceField(label=_("granularity"), choices=Granularity.choices, initial=Granularity.ADMIN)
    coordinates = forms.CharField(
        label=_("coordinates"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 10, "cols": 60, "placeholder": "35.68283,139.75945,p1\n35.6895,139.6917"}),
        help_text=_("One point per line: lat,lon[,ref]"),
    )
    csv_file = forms.FileField(required=False, label=_("…or a CSV file"), help_text=_("Columns lat,lon[,ref]; UTF-8."))
    name = forms.CharField(
        label=_("name"), max_length=100, required=False, help_text=_("Optional, to find the lookup later.")
    )

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        text, upload = cleaned.get("coordinates") or "", cleaned.get("csv_file")
        if upload is not None:
            if upload.size > MAX_UPLOAD_BYTES:
                raise ValidationError(
                    gettext("The CSV file is larger than %(mb)d MB") % {"mb": MAX_UPLOAD_BYTES // 1_000_000}
                )
            try:
                text = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise ValidationError(gettext("The CSV file is not UTF-8 text")) from None
        if not text.strip():
            raise ValidationError(gettext("Paste coordinates or choose a CSV file"))
        cleaned["points"] = parse_rows(csv.reader(io.StringIO(text)))
        if not cleaned["points"]:
            raise ValidationError(gettext("No points found"))
        return cleaned
