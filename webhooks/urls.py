"""Routes of the webhooks app (mounted under /api/v1/)."""
urlpatterns: list = []
