"""Staff-facing strings of third-party apps that ship no Japanese, collected here into the project's catalogue.

`makemessages` only reads the project's sources; marking the same msgids here (gettext_noop: nothing is translated
at import) puts them in locale/ja, where Django finds them for django-axes, django-tasks-db, django-oauth-toolkit and
the strings Django 6.1 added after its Japanese catalogue was last updated. Nothing imports this module.
"""

from django.utils.translation import gettext_noop, ngettext_lazy

THIRD_PARTY_MSGIDS = [
    # Django 6.1 (django/db/models/fields: the blank choice of a select)
    gettext_noop("- Select an option -"),
    # Django 6.1's admin (the date hierarchy's label, the app index, the delete confirmation, the user menu)
    gettext_noop("Filter by %(field_name)s"),
    gettext_noop('The app "%s" could not be found.'),
    ngettext_lazy("…and %(count)d more object.", "…and %(count)d more objects.", "count"),
    gettext_noop("Logout"),
    gettext_noop("No %s matches the given query."),
    # django-axes 8.3.1 (the login throttle's admin)
    gettext_noop("Form Data"),
    gettext_noop("Meta Data"),
    gettext_noop("User Agent"),
    gettext_noop("IP Address"),
    gettext_noop("Username"),
    gettext_noop("HTTP Accept"),
    gettext_noop("Path"),
    gettext_noop("Attempt Time"),
    gettext_noop("Access lock out"),
    gettext_noop("access failure"),
    gettext_noop("access failures"),
    gettext_noop("GET Data"),
    gettext_noop("POST Data"),
    gettext_noop("Failed Logins"),
    gettext_noop("access attempt"),
    gettext_noop("access attempts"),
    gettext_noop("Logout Time"),
    gettext_noop("access log"),
    gettext_noop("access logs"),
    gettext_noop("Account locked: too many login attempts. Please try again later."),
    gettext_noop("Locked Out"),
    gettext_noop("Not set"),
    gettext_noop("Attempt Remaining"),
    # django-tasks-db 0.13.0 (the task results' admin)
    gettext_noop("enqueued at"),
    gettext_noop("started at"),
    gettext_noop("finished at"),
    gettext_noop("args kwargs"),
    gettext_noop("priority"),
    gettext_noop("task path"),
    gettext_noop("worker id"),
    gettext_noop("queue name"),
    gettext_noop("backend name"),
    gettext_noop("run after"),
    gettext_noop("return value"),
    gettext_noop("exception class path"),
    gettext_noop("traceback"),
    gettext_noop("Task Result"),
    gettext_noop("Task Results"),
    # django-oauth-toolkit 3.4.1 (fields of the OAuth clients and access tokens shown in the admin)
    gettext_noop("client ID"),
    gettext_noop("redirect URIs"),
    gettext_noop("Allowed URIs list, space separated"),
    gettext_noop("client type"),
    gettext_noop("Confidential"),
    gettext_noop("Public"),
    gettext_noop("registration source"),
    gettext_noop("How this application was registered (manual, DCR per RFC 7591, or CIMD)"),
    gettext_noop("Manual"),
    gettext_noop("Dynamic Client Registration"),
    gettext_noop("Client ID Metadata Document"),
    gettext_noop("created"),
    gettext_noop("application"),
    gettext_noop("scope"),
    gettext_noop("resource"),
    gettext_noop("expires"),
]
