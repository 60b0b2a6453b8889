"""Test generation and testing environment routes (SPEC "Test generation and testing environment")."""
from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from core.enums import HttpMethod
from core.errors import validate
from core.params import query_dict

from . import services
from .errors import NoEndpointSpecified
from .serializers import (
    GenTestEndpointQuery,
    GenTestEndpointsQuery,
    GlobalEnvResponseSerializer,
    GlobalEnvSerializer,
    HostTestGenerationItemSerializer,
    TestGenerationResultSerializer,
)
from .templates import template_names

_OPTION_PARAMETERS = [
    OpenApiParameter("type", str, enum=template_names(), required=False,
                     description="Template to use; without it the most relevant applicable one (DECISIONS §8)."),
    OpenApiParameter("version", int, required=False, description="Template version (needs `type`)."),
]
_NOT_FOUND = OpenApiResponse(
    response={"type": "object", "properties": {"success": {"type": "boolean", "enum": [False]},
                                                "msg": {"type": "string", "enum": ["Could not find endpoint."]}}},
    description="No endpoint matches.",
)
_NO_ENDPOINT = OpenApiResponse(response={"type": "string", "enum": ["No endpoint specified."]},
                               description="`endpoint` (or `host`) missing, or invalid parameters (ZOD body).")


def _required_text(request, name: str) -> None:
    """SPEC's own 400 for a missing or empty required parameter (before other validation)."""
    if not (request.query_params.get(name) or "").strip():
        raise NoEndpointSpecified()


class GenTestEndpointView(APIView):
    """``GET /api/v1/gen-test-endpoint``: a security test for one endpoint."""

    @extend_schema(
        operation_id="gen_test_endpoint",
        parameters=[
            OpenApiParameter("endpoint", str, required=True,
                             description="Path pattern (`/users/{param1}`), concrete path or endpoint uuid."),
            OpenApiParameter("host", str, required=False),
            OpenApiParameter("method", str, enum=HttpMethod.values, required=False),
            *_OPTION_PARAMETERS,
        ],
        responses={200: TestGenerationResultSerializer, 400: _NO_ENDPOINT, 404: _NOT_FOUND},
        tags=["testing"],
    )
    def get(self, request):
        _required_text(request, "endpoint")
        query = validate(GenTestEndpointQuery(data=query_dict(request.query_params)))
        endpoint = services.endpoint_find(endpoint=query["endpoint"].strip(), host=query.get("host"),
                                          method=query.get("method"))
        return Response(services.test_generate(endpoint=endpoint, template_name=query.get("type"),
                                               version=query.get("version")))


class GenTestEndpointsView(APIView):
    """``GET /api/v1/gen-test-endpoints``: one security test per endpoint of a host."""

    @extend_schema(
        operation_id="gen_test_endpoints",
        parameters=[OpenApiParameter("host", str, required=True), *_OPTION_PARAMETERS],
        responses={200: HostTestGenerationItemSerializer(many=True), 400: _NO_ENDPOINT},
        tags=["testing"],
    )
    def get(self, request):
        _required_text(request, "host")
        query = validate(GenTestEndpointsQuery(data=query_dict(request.query_params)))
        return Response(services.tests_generate_for_host(host=query["host"].strip(), template_name=query.get("type"),
                                                         version=query.get("version")))


class GlobalEnvView(APIView):
    """``/api/v1/testing/global-env``: read (``[]`` when unset), replace, clear."""

    @extend_schema(
        operation_id="testing_global_env_read",
        responses={200: OpenApiResponse(
            response={"oneOf": [
                {"$ref": "#/components/schemas/GlobalEnvResponse"},
                {"type": "array", "maxItems": 0, "items": {}},
            ]},
            description="The environment, or `[]` when none is configured.",
        )},
        tags=["testing"],
    )
    def get(self, request):
        return Response(services.global_env_read())

    @extend_schema(
        operation_id="testing_global_env_set",
        request=GlobalEnvSerializer,
        responses={200: GlobalEnvResponseSerializer},
        description=(
            "Replace the environment. `baseUrl` is required; other keys are optional; extra keys "
            "(string values) become `{{name}}` placeholders. `authToken` is stored encrypted."
        ),
        tags=["testing"],
    )
    def put(self, request):
        values = validate(GlobalEnvSerializer(data=request.data))
        with transaction.atomic():
            return Response(services.global_env_set(values=values))

    @extend_schema(
        operation_id="testing_global_env_clear",
        request=None,
        responses={200: OpenApiResponse(response={"type": "string", "enum": ["Success"]})},
        tags=["testing"],
    )
    def delete(self, request):
        services.global_env_clear()
        return Response("Success")
