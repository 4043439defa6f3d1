"""The History page's before and after of each change (mcpsite/admin_history.py)."""

from django import template

from mcpsite.admin_history import FieldChange, field_changes

register = template.Library()


@register.simple_tag
def change_values(entry) -> list[FieldChange]:
    """{% change_values action as changes %}: the fields a history entry changed, each with before and after."""
    return field_changes(entry)
