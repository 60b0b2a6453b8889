"""Routes of the webhooks app (mounted under /api/v1/), as SPEC.md spells them."""
from django.urls import path

from . import views

urlpatterns = [
    path("webhook", views.WebhookCreateView.as_view(), name="webhook-create"),
    path("webhooks", views.WebhooksView.as_view(), name="webhooks"),
    path("webhook/<str:webhook_id>", views.WebhookView.as_view(), name="webhook"),
]
