from django.contrib import admin
from django.urls import include, path

from .home import home
from .mcp import views
from .observability import metrics, readyz
from .staff_search import search_view

urlpatterns = [
    path("", home, name="home"),  # the admin's "View site"
    path("admin/search/", admin.site.admin_view(search_view), name="staff-search"),  # the header's search box
    path("admin/", admin.site.urls),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics, name="metrics"),
    path("rpc", views.JsonRpcView.as_view(), name="rpc"),
    path("mcp/tools/list", views.RestToolsListView.as_view(), name="rest-tools-list"),
    path("mcp/tools/call", views.RestToolsCallView.as_view(), name="rest-tools-call"),
    path("mcp/<str:group>/tools/list", views.RestToolsListView.as_view(), name="rest-group-tools-list"),
    path("mcp/<str:group>/tools/call", views.RestToolsCallView.as_view(), name="rest-group-tools-call"),
    path("", include("reminders.urls")),
    path("", include("mcpsite_oauth.urls")),
]

# Staff who meet a 403, 404 or 500 inside the admin see it in the admin's chrome, in their language.
handler403 = "mcpsite.admin_pages.permission_denied"
handler404 = "mcpsite.admin_pages.page_not_found"
handler500 = "mcpsite.admin_pages.server_error"
