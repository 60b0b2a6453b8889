"""Agent protocol routes (DECISIONS §9)."""
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView


class VerifyView(APIView):
    """``GET /api/v1/verify``: agents check their key with it; ``"OK"`` for a valid key."""

    @extend_schema(
        operation_id="verify_key",
        responses={200: OpenApiResponse(response={"type": "string", "enum": ["OK"]})},
        tags=["agents"],
    )
    def get(self, request):
        return Response("OK")
