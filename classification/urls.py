"""Routes of the classification app (mounted under /api/v1/)."""
urlpatterns: list = []
