"""The iCalendar feed: `/calendar/<secret token>.ics`. The token is the only credential."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from . import ical, selectors


@require_GET
def calendar_feed(request: HttpRequest, token: str) -> HttpResponse:
    profile = selectors.feed_profile(token=token)
    if profile is None:
        raise Http404("No such calendar")
    response = HttpResponse(
        ical.feed_build(profile=profile, site_url=settings.SITE_URL), content_type="text/calendar; charset=utf-8"
    )
    response["Content-Disposition"] = 'inline; filename="innervoice.ics"'
    # The URL is a secret: keep it out of shared caches and referrers.
    response["Cache-Control"] = "private, max-age=300"
    response["Referrer-Policy"] = "no-referrer"
    return response
