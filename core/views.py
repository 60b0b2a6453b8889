"""Health check."""
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView


class HealthView(APIView):
    """``GET /api/v1``: answers ``"OK"`` without a key, for load balancers and the run script."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="health",
        auth=[],
        responses={200: OpenApiResponse(response={"type": "string", "enum": ["OK"]}, description="Service is up.")},
        tags=["health"],
    )
    def get(self, request):
        return Response("OK")
