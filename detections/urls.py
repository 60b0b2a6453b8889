"""Routes of the detections app (mounted under /api/v1/): alerts and OpenAPI specs."""
from django.urls import path

from . import views

urlpatterns = [
    path("alerts", views.AlertsView.as_view(), name="alerts"),
    path("alert/<str:alert_id>", views.AlertView.as_view(), name="alert"),
    path("spec/new", views.SpecNewView.as_view(), name="spec-new"),
    path("specs", views.SpecsView.as_view(), name="specs"),
    path("spec/<str:name>", views.SpecView.as_view(), name="spec"),
    path("spec/<str:name>/drift", views.SpecDriftView.as_view(), name="spec-drift"),
]
