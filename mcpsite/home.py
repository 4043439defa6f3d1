"""The site's landing page at `/` (the admin's "View site"): what the site is, where an agent connects, where
staff sign in. No data and no sign-in of its own."""

from __future__ import annotations

import json

from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse

from .client_config import http_client_config
from .core.scopes import tool_groups


def home(request: HttpRequest) -> TemplateResponse:
    mcp_url = request.build_absolute_uri("/mcp")  # served by the ASGI router, not a Django URL
    config = http_client_config(mcp_url=mcp_url, raw_key="<API key>")
    return TemplateResponse(
        request,
        "home.html",
        {
            "mcp_url": mcp_url,
            "groups": tool_groups(),
            "client_config": json.dumps(config, indent=2, ensure_ascii=False),
            "admin_url": reverse("admin:index"),
        },
    )
