import axes.apps
import django_tasks_db.apps
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class McpsiteConfig(AppConfig):
    default = True  # this module also holds the AppConfigs of two third-party apps (below)
    name = "mcpsite"
    verbose_name = _("MCP platform")
    # Fields staff may never filter on (mcpsite/admin_security.py); the platform declares Django's user password too.
    secret_fields = {
        "auth.user": {"password"},
        "mcpsite.apikey": {"digest"},
        # An HMAC of a tool call's arguments (a reservation password among them): never shown, never a filter.
        "mcpsite.idempotencyrecord": {"arguments_digest"},
    }
    # What the staff's search box finds (mcpsite/staff_search.py): a selector per model.
    staff_search = {"mcpsite.apikey": "mcpsite.selectors.api_key_staff_search"}

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
        from .logfilters import install_on_access_loggers

        install_on_access_loggers()


# Third-party apps in the staff's admin whose names are plain strings: the same apps under translatable names.
class AxesConfig(axes.apps.AppConfig):
    verbose_name = _("Login throttle (django-axes)")


class TasksDbConfig(django_tasks_db.apps.TasksAppConfig):
    verbose_name = _("Background tasks")  # type: ignore[assignment]  # Django takes a lazy string here
