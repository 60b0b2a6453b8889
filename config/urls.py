"""URL routing: every API route is spelled out under /api/v1 (agent ingestion also /api/v2)."""
from django.contrib import admin
from django.urls import include, path, re_path

from core.admin import queues_admin_view
from core.errors import api_route_not_found, json_bad_request, json_not_found, json_server_error

urlpatterns = [
    path("admin/queues/", admin.site.admin_view(queues_admin_view), name="admin-queues"),
    path("admin/", admin.site.urls),
    path("api/v1", include("core.urls")),
    path("api/v1/", include("inventory.urls")),
    path("api/v1/", include("classification.urls")),
    path("api/v1/", include("detections.urls")),
    path("api/v1/", include("webhooks.urls")),
    path("api/v1/", include("testgen.urls")),
    path("api/v2/", include("inventory.urls_v2")),
    # Unknown routes of the keyed API: 401 without a valid key, then 404 (DECISIONS §2 order).
    re_path(r"^api/v[12](?:/.*)?$", api_route_not_found),
    # Other unknown /api routes answer the JSON string "Not found." even with DEBUG on.
    re_path(r"^api(?:/.*)?$", json_not_found),
]

handler400 = json_bad_request
handler404 = json_not_found
handler500 = json_server_error
