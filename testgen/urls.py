"""Routes of the testgen app (mounted under /api/v1/)."""
from django.urls import path

from . import views

urlpatterns = [
    path("gen-test-endpoint", views.GenTestEndpointView.as_view(), name="gen-test-endpoint"),
    path("gen-test-endpoints", views.GenTestEndpointsView.as_view(), name="gen-test-endpoints"),
    path("testing/global-env", views.GlobalEnvView.as_view(), name="testing-global-env"),
]
