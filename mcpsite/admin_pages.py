"""Custom staff pages of a model's admin (reports, forms, results) on templates/admin/model_page.html, and the
admin's error pages (403, 404) in its own chrome."""

from __future__ import annotations

import logging

from django.contrib import admin
from django.db import DataError
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext
from django.views import defaults

logger = logging.getLogger(__name__)


def model_page(model_admin, request, template: str, *, title: str, **context) -> TemplateResponse:
    """Render `template` with the admin's context, the model's `opts` (breadcrumbs) and `title`."""
    return TemplateResponse(
        request,
        template,
        {**model_admin.admin_site.each_context(request), "opts": model_admin.opts, "title": title, **context},
    )


def _admin_error(request, status: int, title: str, message: str, fallback, exception) -> HttpResponse:
    """Staff who meet an error inside the admin see it in the admin's chrome, translated, with the way back;
    anyone else (and any other URL) gets Django's page."""
    if not request.path.startswith(reverse("admin:index")) or not getattr(request.user, "is_staff", False):
        return fallback(request, exception)
    context = {**admin.site.each_context(request), "title": title, "message": message}
    return TemplateResponse(request, "admin/error_page.html", context, status=status).render()


def permission_denied(request, exception=None) -> HttpResponse:
    """handler403 (mcpsite/urls.py)."""
    message = gettext(
        "You do not have permission to open this page. Ask an administrator for the permission if your work needs it."
    )
    return _admin_error(request, 403, gettext("Permission denied"), message, defaults.permission_denied, exception)


def page_not_found(request, exception=None) -> HttpResponse:
    """handler404 (mcpsite/urls.py)."""
    message = gettext("There is no such page, or it is not one you may open.")
    return _admin_error(request, 404, gettext("Page not found"), message, defaults.page_not_found, exception)


def server_error(request) -> HttpResponse:
    """handler500 (mcpsite/urls.py): inside the admin, staff see the failure in the admin's chrome and their
    language, with the way back; the error itself is already logged with its traceback by Django. Should the admin's
    page fail too (the database gone, say), Django's plain page is the answer."""
    try:
        with translation.override(getattr(request, "LANGUAGE_CODE", None) or translation.get_language()):
            message = gettext(
                "Something went wrong on our side. Try again; if it happens again, tell the site's administrators "
                "when it happened."
            )
            plain = lambda request, _exception: defaults.server_error(request)  # noqa: E731
            return _admin_error(request, 500, gettext("Server error"), message, plain, None)
    except Exception:
        logger.exception("The admin's error page failed; answering with Django's plain page")
        return defaults.server_error(request)


class AdminAddressValueMiddleware:
    """A value in an admin page's address (`?date__gte=0001-01-01`, `?created_at__year=99999999999`) that the page's
    own checks let through and a date, a number or the database cannot hold is the staff's input, not the site's
    failure: the page answers 400 in the admin's chrome saying so, with a link to the page without it, instead of a
    500. Django's own list filters and date hierarchy convert such values only when the query runs; this is the one
    place that catches them for every list and report."""

    CAUGHT = (OverflowError, ValueError, DataError)

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if request.method != "GET" or not request.GET or not isinstance(exception, self.CAUGHT):
            return None
        if not request.path.startswith(reverse("admin:index")) or not getattr(request.user, "is_staff", False):
            return None
        logger.warning("Refused a value in the address of %s: %r", request.path, exception)
        return bad_address(request)


def bad_address(request) -> HttpResponse:
    """400 in the admin's chrome: a value in the page's address is one the page cannot use."""
    message = gettext(
        "A value in this page's address is out of range or not understood (a date before year 1 or after "
        "9999, a number too large). Open the page without it and choose again."
    )
    context = {
        **admin.site.each_context(request),
        "title": gettext("Bad request"),
        "message": message,
        "retry_url": request.path,
    }
    return TemplateResponse(request, "admin/error_page.html", context, status=400).render()
