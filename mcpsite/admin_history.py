"""Before and after of every field a staff edit in the admin changes, kept in Django's own history
(docs/decisions/0015-change-history.md).

`StaffModelAdmin.construct_change_message` adds them to the change message Django writes (`LogEntry.change_message`,
a JSON list): each "changed" part gets `values`, one `{"field", "before", "after"}` per changed field, as the form
showed and took them (a film's title, a show's theater by name, a price in yen, a list of seat labels). Django's own
rendering ignores the extra key, so the history's sentence ("Changed title.") stays as it was; the History page
(templates/admin/object_history.html) shows the values under it. A secret field (`AppConfig.secret_fields`) or a
password input is named without its values. Field names and choice labels are stored in the source language and
shown in the reader's, as Django stores the field names.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib.admin.models import LogEntry
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db.models import Model
from django.utils import translation
from django.utils.text import capfirst
from django.utils.translation import gettext

from .core.secret_fields import secret_fields

VALUE_LIMIT = 300  # characters kept of a value (a description, keywords)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ", timespec="minutes")
    if isinstance(value, datetime.time):
        return value.isoformat(timespec="minutes" if not value.second else "seconds")
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value == value.to_integral() else str(value)
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(_text(item) for item in value)
    return str(value)


def _choice_pairs(field: forms.ChoiceField) -> Iterator[tuple[Any, Any]]:
    for key, label in field.choices:  # type: ignore[union-attr,misc]  # a ChoiceField's choices are normalised
        if isinstance(label, list | tuple):
            yield from label  # a group
        else:
            yield key, label


def _shown(field: forms.Field, value: Any) -> tuple[str, bool]:
    """The value as the form shows it, and whether it is a label of the code's (a choice, yes/no: translated when
    read)."""
    if isinstance(field, forms.ModelChoiceField):
        many = isinstance(field, forms.ModelMultipleChoiceField)
        items = list(value or []) if many else [value]
        shown = []
        for item in items:
            if item is not None and not isinstance(item, Model):
                try:
                    item = forms.ModelChoiceField.to_python(field, item)  # a pk, as the form's initial holds it
                except ValidationError:
                    pass
            shown.append(_text(item))
        return ", ".join(s for s in shown if s), False
    if isinstance(field, forms.MultipleChoiceField):
        return _text(list(value or [])), False
    if isinstance(field, forms.ChoiceField):
        labels = {str(key): str(label) for key, label in _choice_pairs(field)}
        return ("" if value in (None, "") else labels.get(str(value), _text(value))), True
    return _text(value), isinstance(value, bool)


def _model(form: forms.BaseForm) -> type[Model] | None:
    return getattr(getattr(form, "_meta", None), "model", None)


def _label(form: forms.BaseForm, name: str, field: forms.Field) -> str:
    """The field's name as the catalogue has it: a model field's verbose name ("start time"), else the form field's
    label."""
    model = _model(form)
    try:
        return str(model._meta.get_field(name).verbose_name)  # type: ignore[union-attr]
    except (AttributeError, FieldDoesNotExist):
        return str(field.label or name)


def _is_secret(form: forms.BaseForm, name: str, field: forms.Field) -> bool:
    model = _model(form)
    declared = secret_fields().get(model._meta.label_lower, frozenset()) if model is not None else frozenset()
    return name in declared or isinstance(field.widget, forms.PasswordInput)


def field_values(form: forms.BaseForm) -> list[dict[str, Any]]:
    """One `{"field", "before", "after"}` per field the form changed, in the source language; a secret field as
    `{"field", "secret": true}`."""
    values: list[dict[str, Any]] = []
    names = form.changed_data  # in the page's language first: a localised date must compare as the form read it
    with translation.override(None):
        for name in names:
            field = form.fields[name]
            label = _label(form, name, field)
            if _is_secret(form, name, field):
                values.append({"field": label, "secret": True})
                continue
            before, choice = _shown(field, form[name].initial)
            after, _choice = _shown(field, form.cleaned_data.get(name))
            values.append({"field": label, "before": before[:VALUE_LIMIT], "after": after[:VALUE_LIMIT]})
            if choice:
                values[-1]["choice"] = True
    return values


def _changed_forms(formsets: Iterable[forms.BaseFormSet]) -> Iterator[forms.BaseForm]:
    """The inline forms behind Django's "changed" parts of the message, in the same order."""
    for formset in formsets:
        changed = [obj for obj, _fields in getattr(formset, "changed_objects", [])]
        for obj in changed:
            yield next(f for f in formset.forms if f.instance is obj)


def with_values(message: list[dict[str, Any]], *, form: forms.BaseForm, formsets: Iterable) -> list[dict[str, Any]]:
    """Django's change message (`construct_change_message`) with each changed part's before and after."""
    inline_forms = _changed_forms(formsets or [])
    for part in message:
        changed = part.get("changed")
        if changed is None:
            continue
        source = next(inline_forms, None) if "name" in changed else form
        if source is not None:
            changed["values"] = field_values(source)
            # The fields by the names the catalogue has (a model field's verbose name), so Django's own sentence
            # ("Changed title.") reads in the reader's language too; Django stores the form's capitalised label.
            changed["fields"] = [value["field"] for value in changed["values"]]
    return message


@dataclass(frozen=True, slots=True)
class FieldChange:
    object: str  # the inline object changed ("" for the object of the page)
    field: str
    before: str
    after: str
    secret: bool


def field_changes(entry: LogEntry) -> list[FieldChange]:
    """The before and after a history entry holds, in the reader's language (none for an entry written without
    them: an addition, a deletion, an action's note, an entry from before they were kept)."""
    try:
        message = json.loads(entry.change_message) if entry.change_message.startswith("[") else []
    except json.JSONDecodeError:
        return []
    changes = []
    for part in message if isinstance(message, list) else []:
        changed = part.get("changed") if isinstance(part, dict) else None
        if not isinstance(changed, dict):
            continue
        where = str(changed.get("object", ""))
        for value in changed.get("values", []):
            field = capfirst(gettext(str(value.get("field", ""))))
            if value.get("secret"):
                changes.append(FieldChange(where, field, "", "", True))
                continue
            before, after = str(value.get("before", "")), str(value.get("after", ""))
            if value.get("choice"):
                before, after = (gettext(v) if v else v for v in (before, after))
            changes.append(FieldChange(where, field, before, after, False))
    return changes
