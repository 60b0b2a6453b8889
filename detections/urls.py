"""Routes of the detections app (mounted under /api/v1/)."""
urlpatterns: list = []
