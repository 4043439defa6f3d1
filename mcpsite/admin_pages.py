"""Custom staff pages of a model's admin (reports, forms, results) on templates/admin/model_page.html."""

from __future__ import annotations

from django.template.response import TemplateResponse


def model_page(model_admin, request, template: str, *, title: str, **context) -> TemplateResponse:
    """Render `template` with the admin's context, the model's `opts` (breadcrumbs) and `title`."""
    return TemplateResponse(
        request,
        template,
        {**model_admin.admin_site.each_context(request), "opts": model_admin.opts, "title": title, **context},
    )
