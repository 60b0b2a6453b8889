"""Routes of the inventory app (mounted under /api/v1/)."""
from django.urls import path

from . import views

urlpatterns = [
    path("verify", views.VerifyView.as_view(), name="verify"),
]
