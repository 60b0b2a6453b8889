"""Routes of the inventory app (mounted under /api/v1/)."""
from django.urls import path

from . import views
from .api import views as api

urlpatterns = [
    # Agent protocol (DECISIONS §9)
    path("verify", views.VerifyView.as_view(), name="verify"),
    path("agent-config", views.AgentConfigView.as_view(), name="agent-config"),
    path("log-request/single", views.LogRequestSingleView.as_view(), name="log-request-single"),
    path("log-request/batch", views.LogRequestBatchView.as_view(), name="log-request-batch"),
    # end of agent protocol routes
]

# SPEC "Endpoints", "Hosts", "New detections" (inventory.api). Ids are parsed by the views,
# so a malformed id answers 404 "Endpoint does not exist." like an unknown one.
urlpatterns += [
    path("endpoints", api.EndpointListView.as_view(), name="endpoint-list"),
    path("endpoint/<str:endpoint_id>", api.EndpointDetailView.as_view(), name="endpoint-detail"),
    path("endpoint/<str:endpoint_id>/usage", api.EndpointUsageView.as_view(), name="endpoint-usage"),
    path("endpoint/<str:endpoint_id>/authenticated", api.EndpointAuthenticatedView.as_view(),
         name="endpoint-authenticated"),
    path("endpoint/<str:endpoint_id>/enable-full-trace-capture", api.EndpointFullTraceCaptureView.as_view(),
         name="endpoint-full-trace-capture"),
    path("endpoint/<str:endpoint_id>/suggested-paths", api.EndpointSuggestedPathsView.as_view(),
         name="endpoint-suggested-paths"),
    path("endpoint/<str:endpoint_id>/update-paths", api.EndpointUpdatePathsView.as_view(),
         name="endpoint-update-paths"),
    path("endpoint/<str:endpoint_id>/graphql-schema", api.EndpointGraphQlSchemaView.as_view(),
         name="endpoint-graphql-schema"),
    path("hosts", api.HostListView.as_view(), name="host-list"),
    path("hosts-graph", api.HostsGraphView.as_view(), name="hosts-graph"),
    path("new-detections", api.NewDetectionsView.as_view(), name="new-detections"),
    path("new-detections-agg", api.NewDetectionsAggView.as_view(), name="new-detections-agg"),
]
