"""Custom staff pages of a model's admin (reports, forms, results) on templates/admin/model_page.html, and the
admin's error pages (403, 404) in its own chrome."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext
from django.views import defaults


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
