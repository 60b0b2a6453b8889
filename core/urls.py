from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from .csp import swagger_policy
from .views import HealthView

urlpatterns = [
    path("", HealthView.as_view(), name="health"),
    path("/schema", SpectacularAPIView.as_view(), name="schema"),
    path("/docs", swagger_policy(SpectacularSwaggerView.as_view(url_name="schema")), name="docs"),
]
