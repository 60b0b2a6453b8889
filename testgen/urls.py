"""Routes of the testgen app (mounted under /api/v1/)."""
urlpatterns: list = []
