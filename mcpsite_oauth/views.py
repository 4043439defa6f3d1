"""Thin views over django-oauth-toolkit: sign-in and consent pages in the admin's look, the project's rules on
resources and scopes at the authorization endpoint, registration narrowed to authorization-code clients, and the
protected resource metadata of `/mcp`."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import admin
from django.contrib.auth.mixins import LoginRequiredMixin
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse_lazy
from django.utils.csp import CSP
from django.utils.decorators import method_decorator
from django.utils.timesince import TIME_STRINGS
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext
from django.views.decorators.debug import sensitive_post_parameters
from django.views.generic import TemplateView
from django.views.generic.base import ContextMixin
from oauth2_provider import views as dot
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import get_access_token_model, get_application_model
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.signals import app_authorized
from oauth2_provider.views import AuthorizationView, OAuthProtectedResourceMetadataView
from oauth2_provider.views.dynamic_client_registration import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)
from oauthlib.oauth2.rfc6749.errors import (
    AccessDeniedError,
    CustomOAuth2Error,
    InvalidRequestError,
    InvalidScopeError,
)

from mcpsite.core import metrics
from mcpsite.core.limits import over_limit
from mcpsite.core.scopes import MODES, READ, WRITE, all_scopes, scope_name, scopes_allow, scopes_cover, tool_groups

from .models import token_checksum
from .selectors import user_connections
from .services import client_access_revoke, mcp_resources, scopes_for_user, site_origin
from .validators import GRANT_TYPES, redirect_uri_acceptable

# What each scope lets a client do, shown on the consent page.
GROUP_DESCRIPTIONS = {
    "cinema": _("Cinema: movies, schedules, seats and reservations"),
    "ledger": _("Ledger: accounts, journal entries and reports"),
    "geo": _("Geo: resolve coordinates to addresses"),
    "merchant": _("Merchant: products, inventory and cart mandates"),
    "reminders": _("Reminders: your calendar, messages and reminders"),
}
# What each mode of a group lets a client do, beside the group's description on the consent page.
MODE_LABELS = {
    READ: _("Read: look things up"),
    WRITE: _("Write: create, change and cancel"),
}
# How much of a group a client holds, on the page of connected clients.
HELD_LABELS = {
    "": _("read and write"),
    READ: _("read only"),
    WRITE: _("write only"),
}
REGISTRATION_GROUP = "oauth.register"
# What the consent form answers is bound server-side, in the session, from the request validated at GET.
PENDING_SESSION_KEY = "mcpsite_oauth.pending"
PENDING_MAX = 5
BOUND_CREDENTIALS = ("client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method")
STALE_REQUEST = _("This sign-in request was already answered or has expired. Start again from the client.")


class AdminStyleMixin(ContextMixin):
    """The admin's language and look on the sign-in pages, headed with what the user signs in to (this site, for an
    MCP client), not the admin's "Django administration": most who sign in here are not staff."""

    request: HttpRequest

    def get_context_data(self, **kwargs):
        header = _("%(site)s: sign in for an MCP client") % {"site": settings.MCP_SERVER_NAME}
        return {
            **admin.site.each_context(self.request),
            "site_header": header,
            "site_title": header,
            **super().get_context_data(**kwargs),
        }


def duration_text(seconds: int) -> str:
    """A lifetime as a person writes it, in the reader's language: "30 days" ("30日"), "1 hour", "1 day, 12 hours";
    days, hours and minutes, never weeks or months (timesince's "4 weeks, 2 days" for 30 days)."""
    minutes = max(1, -(-seconds // 60))  # whole minutes, rounded up: a lifetime is never said shorter than it is
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [TIME_STRINGS[unit] % {"num": n} for unit, n in (("day", days), ("hour", hours), ("minute", minutes)) if n]
    return list_text(parts)


class SignInView(AdminStyleMixin, LoginView):
    """The admin's login page, for any active user (not only staff): a client acts as the user who signs in."""

    template_name = "mcpsite_oauth/sign_in.html"
    redirect_authenticated_user = False
    extra_context = {"title": _("Sign in to connect an MCP client"), "subtitle": None}

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "app_path": self.request.get_full_path()}


class ConsentView(AdminStyleMixin, AuthorizationView):
    """Which client, which redirect host, which groups and for each read, write or both: allow or deny. Adds to
    django-oauth-toolkit's endpoint that the `resource` is this site's MCP resource (RFC 8707; the default when the
    client names none) and that the groups are among those the user may use (an API key's rule); requested groups
    the user may not use are shown and left out, and a request with none left is refused with `invalid_scope`. The
    person may grant less than was asked: a group's read without its write."""

    template_name = "mcpsite_oauth/consent.html"
    login_url = reverse_lazy("oauth2_provider:login")

    def validate_authorization_request(self, request):
        scopes, credentials = super().validate_authorization_request(request)
        if credentials.get("code_challenge_method") != "S256":
            # Refused before the consent page, not after it (the toolkit refuses "plain" only when issuing the code).
            error = InvalidRequestError(
                description="PKCE with code_challenge_method=S256 is required", state=credentials["state"]
            )
            raise OAuthToolkitError(error=error, redirect_uri=credentials["redirect_uri"])
        resources = request.GET.getlist("resource")
        if not resources:
            request.GET = request.GET.copy()
            request.GET["resource"] = mcp_resources(origin=site_origin(request=request))[0]
        elif error := self._resource_error(resources, credentials.get("state")):
            raise OAuthToolkitError(error=error, redirect_uri=credentials["redirect_uri"])
        allowed, refused = scopes_for_user(user=request.user, requested=scopes)
        if not allowed:
            self.no_usable_group = refused  # error_response explains it to the user before the client hears it
            error = InvalidScopeError(
                description="The requested scopes are tool groups this user may not use", state=credentials["state"]
            )
            raise OAuthToolkitError(error=error, redirect_uri=credentials["redirect_uri"])
        self.refused_groups = refused
        self.authorization_request = self._remember(credentials, allowed, request.GET.getlist("resource"))
        return allowed, credentials

    def _remember(self, credentials: dict, scopes: list[str], resources: list[str]) -> str:
        """Keep the validated request in the user's session until they answer it; the consent form carries only its
        id, so none of it (the PKCE challenge above all) can be changed or dropped on the way. Returns the id."""
        request_id = secrets.token_urlsafe(16)
        pending = dict(self.request.session.get(PENDING_SESSION_KEY, {}))
        pending[request_id] = {
            **{key: credentials.get(key) for key in BOUND_CREDENTIALS},
            "scope": " ".join(scopes),
            "resource": " ".join(resources),
        }
        # A few open consent pages (tabs) at once; the oldest is forgotten first.
        self.request.session[PENDING_SESSION_KEY] = dict(list(pending.items())[-PENDING_MAX:])
        return request_id

    def _recall(self) -> dict | None:
        """The request the consent form answers, as validated when the page was shown (once: it is forgotten)."""
        pending = dict(self.request.session.get(PENDING_SESSION_KEY, {}))
        bound = pending.pop(self.request.POST.get("authorization_request", ""), None)
        self.request.session[PENDING_SESSION_KEY] = pending
        return bound

    def _resource_error(self, resources, state):
        ours = mcp_resources(origin=site_origin(request=self.request))
        if all(resource in ours for resource in resources):
            return None
        return CustomOAuth2Error(error="invalid_target", description=f"Tokens here are only for {ours[0]}", state=state)

    def error_response(self, error, application, **kwargs):
        response = super().error_response(error, application, **kwargs)
        refused = getattr(self, "no_usable_group", None)
        if refused is None or response.status_code != 302:
            return response
        # The user signed in and may use none of the groups asked for: say so, in their language, and hand the
        # client its invalid_scope by a link (and a timed refresh), which the sign-in form's CSP cannot block.
        client = get_application_model().objects.filter(client_id=self.request.GET.get("client_id", "")).first()
        context = {
            **self.get_context_data(),
            "client_name": (client.name or client.client_id) if client else "",
            "refused_text": list_text(GROUP_DESCRIPTIONS[group] for group in refused),
            "return_url": response["Location"],
        }
        return TemplateResponse(self.request, "mcpsite_oauth/no_groups.html", context, status=403)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        scopes = context.get("scopes") or []
        context.update(
            authorization_request=getattr(self, "authorization_request", ""),
            title=_("Connect an MCP client"),
            redirect_host=urlsplit(context.get("redirect_uri") or "").netloc,
            groups=consent_rows(scopes),
            refused_groups=[(group, GROUP_DESCRIPTIONS[group]) for group in getattr(self, "refused_groups", [])],
            refused_text=list_text(GROUP_DESCRIPTIONS[group] for group in getattr(self, "refused_groups", [])),
            access_lifetime=duration_text(oauth2_settings.ACCESS_TOKEN_EXPIRE_SECONDS),
            refresh_lifetime=duration_text(oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS),
        )
        return context

    def render_to_response(self, context, **kwargs):
        response = super().render_to_response(context, **kwargs)
        if redirect_uri := context.get("redirect_uri"):
            # The browser applies form-action to the redirect that follows the POST: allow the client's registered
            # (already validated) redirect target on this page only.
            parts = urlsplit(redirect_uri)
            target = f"{parts.scheme}://{parts.netloc}" if parts.netloc else f"{parts.scheme}:"
            response._csp_config = {**settings.SECURE_CSP, "form-action": [CSP.SELF, target]}
        return response

    def form_valid(self, form):
        bound = self._recall()
        if bound is None:
            # Answered already, or a form this session never showed.
            return self.render_to_response(
                {**self.get_context_data(), "error": {"error": "invalid_request", "description": STALE_REQUEST}},
                status=400,
            )
        form.cleaned_data.update(bound)
        application = get_application_model().objects.filter(client_id=form.cleaned_data["client_id"]).first()
        redirect_uri = form.cleaned_data["redirect_uri"]
        if application is None or not application.redirect_uri_allowed(redirect_uri):
            # A tampered form: never send anything to an address the client did not register.
            return HttpResponseBadRequest()
        state = form.cleaned_data.get("state")
        if error := self._resource_error(form.cleaned_data.get("resource", "").split(), state):
            return self.error_response(OAuthToolkitError(error=error, redirect_uri=redirect_uri), application)
        if form.cleaned_data.get("allow"):
            requested = form.cleaned_data["scope"].split()
            chosen = self.request.POST.getlist("groups")
            allowed, refused = scopes_for_user(user=self.request.user, requested=chosen)  # type: ignore[arg-type]  # signed in
            if refused or not set(chosen) <= set(all_scopes()) or not scopes_cover(requested, chosen):
                error = InvalidScopeError(description="A chosen scope is not available to this user", state=state)
                return self.error_response(OAuthToolkitError(error=error, redirect_uri=redirect_uri), application)
            if not allowed:
                error = AccessDeniedError(description="No tool group was chosen", state=state)
                return self.error_response(OAuthToolkitError(error=error, redirect_uri=redirect_uri), application)
            form.cleaned_data["scope"] = " ".join(allowed)
        return super().form_valid(form)


def consent_rows(scopes: list[str]) -> list[tuple[str, Any, list[tuple[str, Any]]]]:
    """The consent page's rows: each requested group, its description, and the (scope, label) of each mode asked
    for, one box each."""
    return [
        (
            group,
            GROUP_DESCRIPTIONS[group],
            [(scope_name(group, m), MODE_LABELS[m]) for m in MODES if scopes_allow(scopes, group, m)],
        )
        for group in tool_groups()
        if scopes_allow(scopes, group)
    ]


def scope_text(scope: str) -> str:
    """A scope as a person reads it: "Ledger: accounts, journal entries and reports (read only)"."""
    group, _sep, mode = scope.partition(":")
    return _("%(group)s (%(held)s)") % {"group": GROUP_DESCRIPTIONS[group], "held": HELD_LABELS[mode]}


def registration_error(error: str, description: str, status: int = 400) -> JsonResponse:
    """An RFC 7591 §3.2.2 error answer."""
    return JsonResponse({"error": error, "error_description": description}, status=status)


def metadata_error(body: bytes) -> JsonResponse | None:
    """Registration's rules on client metadata, for a registration (RFC 7591) and an update of one (RFC 7592):
    a bounded JSON object, authorization-code clients only, a few redirect URIs, plain http only to loopback.
    None when the metadata may go on to django-oauth-toolkit's own checks."""
    if len(body) > settings.OAUTH_REGISTRATION_MAX_BYTES:
        return registration_error(
            "invalid_client_metadata", f"The metadata may be at most {settings.OAUTH_REGISTRATION_MAX_BYTES} bytes"
        )
    try:
        metadata = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        metadata = None
    if not isinstance(metadata, dict):
        return registration_error("invalid_client_metadata", "The body must be a JSON object")
    grant_types = metadata.get("grant_types", ["authorization_code"])
    response_types = metadata.get("response_types", ["code"])
    if not isinstance(grant_types, list) or not set(map(str, grant_types)) <= GRANT_TYPES:
        return registration_error("invalid_client_metadata", "grant_types: only authorization_code, refresh_token")
    if not isinstance(response_types, list) or response_types != ["code"]:
        return registration_error("invalid_client_metadata", "response_types: only code")
    redirect_uris = metadata.get("redirect_uris")
    if isinstance(redirect_uris, list):
        if len(redirect_uris) > settings.OAUTH_REGISTRATION_MAX_REDIRECT_URIS:
            limit = settings.OAUTH_REGISTRATION_MAX_REDIRECT_URIS
            return registration_error("invalid_redirect_uri", f"At most {limit} redirect URIs")
        if not all(map(redirect_uri_acceptable, map(str, redirect_uris))):
            return registration_error("invalid_redirect_uri", "http redirect URIs must be loopback (127.0.0.1)")
    return None


class RegistrationView(DynamicClientRegistrationView):
    """RFC 7591 registration for authorization-code clients only (MCP clients are); other grant and response types
    are refused here with `invalid_client_metadata` rather than registered and then refused at every use. Limited
    per client address (OAUTH_REGISTRATION_RATE, counted by the shared rate limiter like the API keys' rates)."""

    def post(self, request, *args, **kwargs):
        address = request.META.get("REMOTE_ADDR") or "unknown"
        if over_limit(group=REGISTRATION_GROUP, key=address, rate=settings.OAUTH_REGISTRATION_RATE):
            metrics.rate_limited("oauth_registration")
            return registration_error("too_many_requests", "Too many registrations from this address", status=429)
        if error := metadata_error(request.body):
            return error
        return super().post(request, *args, **kwargs)


class RegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592: a client reads, updates or deletes its own registration with its registration access token. An
    update obeys registration's rules (metadata_error); the body is checked before the token, so a bad body is
    400 whatever the credentials."""

    def put(self, request, *args, **kwargs):
        if error := metadata_error(request.body):
            return error
        return super().put(request, *args, **kwargs)


def list_text(items: Iterable[object]) -> str:
    """Items joined the reader's way ("a, b" in English, "a、b" in Japanese)."""
    return pgettext("list separator", ", ").join(str(item) for item in items)


class McpResourceMetadataView(OAuthProtectedResourceMetadataView):
    """RFC 9728 metadata of this site's MCP endpoint (`/.well-known/oauth-protected-resource/mcp`) and of the site
    (the root form); behind a proxy OAUTH_ISSUER_URL names the public origin."""

    def get_resource(self, request):
        return site_origin(request=request) + request.path.partition("/.well-known/oauth-protected-resource")[2].rstrip(
            "/"
        )

    def get_authorization_servers(self, request):
        return [site_origin(request=request)]

    def get_scopes_supported(self):
        """Every scope: each tool group bare (read and write), then read only and write only."""
        return list(all_scopes())


class ConnectionsView(AdminStyleMixin, LoginRequiredMixin, TemplateView):
    """The signed-in user's connected clients (those holding a live token of theirs), each with *Revoke*: what the
    consent page points to for taking access back. Any active user, like the sign-in."""

    template_name = "mcpsite_oauth/connections.html"
    login_url = reverse_lazy("oauth2_provider:login")

    def get_context_data(self, **kwargs):
        return {
            **super().get_context_data(**kwargs),
            "title": _("Connected MCP clients"),
            "connections": [
                (client, [scope_text(scope) for scope in client.scopes])
                for client in user_connections(user=self.request.user)  # type: ignore[arg-type]  # login required
            ],
        }

    def post(self, request, *args, **kwargs):
        application_id = request.POST.get("client", "")
        if application_id.isdigit():
            client_access_revoke(application_ids=[int(application_id)], user=request.user)
        return redirect("oauth2_provider:connections")


class TokenView(dot.TokenView):
    """django-oauth-toolkit's token endpoint, answering what it issued even when a concurrent reuse revoked it.

    Of concurrent requests with one code or refresh token, the first issues tokens and the others, finding it used,
    revoke what it gave (McpOAuth2Validator.save_bearer_token: a reused code or refresh token has leaked). That can
    land between the first's commit and its reading the new access token back for the `app_authorized` signal,
    where the toolkit's `objects.get` raised DoesNotExist: a 500. Here the signal goes out for a token that still
    exists, and the answer stands (its tokens are revoked like the rest of their family: the client signs in again).
    """

    @method_decorator(sensitive_post_parameters("password", "client_secret"))
    def authorization_flow_token_response(self, request, *args, **kwargs) -> HttpResponse:
        _url, headers, body, status = self.create_token_response(request)
        if status == 200 and (access_token := json.loads(body).get("access_token")) is not None:
            token = get_access_token_model().objects.filter(token_checksum=token_checksum(access_token)).first()
            if token is not None:
                app_authorized.send(sender=self, request=request, token=token)
        response = HttpResponse(content=body, status=status)
        for name, value in headers.items():
            response[name] = value
        return response
