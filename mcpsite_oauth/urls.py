"""The authorization server's endpoints and the metadata documents, at the site root.

Named in django-oauth-toolkit's namespace: its metadata view reverses `oauth2_provider:authorize` and the others
to publish them.
"""

from django.urls import path
from oauth2_provider import views as dot

from . import views

app_name = "oauth2_provider"

urlpatterns = [
    # RFC 8414 and RFC 9728 documents live at the origin's /.well-known.
    path(
        ".well-known/oauth-authorization-server",
        dot.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource",
        views.McpResourceMetadataView.as_view(),
        name="oauth-resource-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource/mcp",
        views.McpResourceMetadataView.as_view(),
        name="oauth-resource-metadata-mcp",
    ),
    path("oauth/login/", views.SignInView.as_view(), name="login"),
    path("oauth/authorize/", views.ConsentView.as_view(), name="authorize"),
    path("oauth/connections/", views.ConnectionsView.as_view(), name="connections"),
    path("oauth/token/", views.TokenView.as_view(), name="token"),
    path("oauth/revoke/", dot.RevokeTokenView.as_view(), name="revoke-token"),
    path("oauth/register/", views.RegistrationView.as_view(), name="dcr-register"),
    path(
        "oauth/register/<str:client_id>/",
        views.RegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
]
