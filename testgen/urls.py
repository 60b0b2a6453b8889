"""Routes of the testgen app (mounted under /api/v1/)."""
from django.urls import path

from . import views

urlpatterns = [
    path("gen-test-endpoint", views.GenTestEndpointView.as_view(), name="gen-test-endpoint"),
    path("gen-test-endpoints", views.GenTestEndpointsView.as_view(), name="gen-test-endpoints"),
    path("testing/global-env", views.GlobalEnvView.as_view(), name="testing-global-env"),
    path("testing/runs", views.TestRunsView.as_view(), name="testing-runs"),
    path("testing/runs/<str:run_id>", views.TestRunView.as_view(), name="testing-run"),
]
