"""Agent ingestion routes under /api/v2/."""
from django.urls import path

from . import views

urlpatterns = [
    path("log-request/batch", views.LogRequestBatchV2View.as_view(), name="log-request-batch-v2"),
]
