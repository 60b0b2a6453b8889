"""Routes of the inventory app (mounted under /api/v1/)."""
from django.urls import path

from . import views

urlpatterns = [
    # Agent protocol (DECISIONS §9) -- ingestion helper
    path("verify", views.VerifyView.as_view(), name="verify"),
    path("agent-config", views.AgentConfigView.as_view(), name="agent-config"),
    path("log-request/single", views.LogRequestSingleView.as_view(), name="log-request-single"),
    path("log-request/batch", views.LogRequestBatchView.as_view(), name="log-request-batch"),
    # end of agent protocol routes
]
