"""Agent ingestion routes under /api/v2/."""
urlpatterns: list = []
