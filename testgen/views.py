"""Test generation and testing environment routes (SPEC "Test generation and testing environment")."""
from __future__ import annotations

import uuid

from django.db import transaction
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework.response import Response
from rest_framework.views import APIView

from core.enums import HttpMethod
from core.errors import validate
from core.paging import list_response, page_of
from core.params import query_dict
from core.openapi import operation
from core.schema import ZOD_ERROR_SCHEMA
from core.masking import secrets_masked
from core.scopes import Scope, sees_secrets

from . import services
from .errors import NoEndpointSpecified, TestRunNotFound
from .models import TestRun
from .serializers import (
    GenTestEndpointQuery,
    GenTestEndpointsQuery,
    GlobalEnvResponseSerializer,
    GlobalEnvSerializer,
    HostTestGenerationItemSerializer,
    TestGenerationResultSerializer,
    TestRunDetailSerializer,
    TestRunListQuery,
    TestRunSerializer,
    TestRunStartSerializer,
)
from .templates import template_names

_OPTION_PARAMETERS = [
    OpenApiParameter("type", str, enum=template_names(), required=False,
                     description="Template to use; without it the most relevant applicable one (DECISIONS §8)."),
    OpenApiParameter("version", {"type": "integer", "minimum": 1, "maximum": 1000}, required=False,
                     description="Template version (needs `type`)."),
]
_NOT_FOUND = OpenApiResponse(
    response={"type": "object", "required": ["success", "msg"],
              "properties": {"success": {"type": "boolean", "enum": [False]},
                             "msg": {"type": "string", "enum": ["Could not find endpoint."]}}},
    description="No endpoint matches.",
)
_ZOD = OpenApiResponse(response=ZOD_ERROR_SCHEMA, description="Validation error (zod-style issues).")
_NO_ENDPOINT = OpenApiResponse(
    response={"oneOf": [{"type": "string", "enum": ["No endpoint specified."]}, ZOD_ERROR_SCHEMA]},
    description="`endpoint` (or `host`) missing: the JSON string; other invalid parameters: ZOD body.",
)


def _json(body: bytes) -> HttpResponse:
    """JSON already rendered (stored generated tests): sent as it is, as DRF would send it rendered."""
    return HttpResponse(body, content_type="application/json")


def _required_text(request, name: str) -> None:
    """SPEC's own 400 for a missing or empty required parameter (before other validation)."""
    if not (request.query_params.get(name) or "").strip():
        raise NoEndpointSpecified()


class GenTestEndpointView(APIView):
    """``GET /api/v1/gen-test-endpoint``: a security test for one endpoint."""

    @operation(Scope.READ, "gen_test_endpoint",
               parameters=[
                   OpenApiParameter("endpoint", str, required=True,
                                    description="Path pattern (`/users/{param1}`), concrete path or endpoint uuid."),
                   OpenApiParameter("host", str, required=False),
                   OpenApiParameter("method", str, enum=HttpMethod.values, required=False),
                   *_OPTION_PARAMETERS,
               ],
               responses={200: TestGenerationResultSerializer, 400: _NO_ENDPOINT, 404: _NOT_FOUND}, tags=["testing"])
    def get(self, request):
        _required_text(request, "endpoint")
        query = validate(GenTestEndpointQuery(data=query_dict(request.query_params)))
        endpoint = services.endpoint_find(endpoint=query["endpoint"].strip(), host=query.get("host"),
                                          method=query.get("method"))
        return _json(services.test_generate_json(endpoint=endpoint, template_name=query.get("type"),
                                                 version=query.get("version")))


class GenTestEndpointsView(APIView):
    """``GET /api/v1/gen-test-endpoints``: one security test per endpoint of a host."""

    @operation(Scope.READ, "gen_test_endpoints",
               parameters=[OpenApiParameter("host", str, required=True), *_OPTION_PARAMETERS],
               responses={200: HostTestGenerationItemSerializer(many=True), 400: _NO_ENDPOINT}, tags=["testing"])
    def get(self, request):
        _required_text(request, "host")
        query = validate(GenTestEndpointsQuery(data=query_dict(request.query_params)))
        return _json(services.tests_generate_for_host_json(host=query["host"].strip(),
                                                           template_name=query.get("type"),
                                                           version=query.get("version")))


class GlobalEnvView(APIView):
    """``/api/v1/testing/global-env``: read (``[]`` when unset), replace, clear."""

    @operation(Scope.READ, "testing_global_env_read",
               responses={200: OpenApiResponse(
                   response={"oneOf": [
                       {"$ref": "#/components/schemas/GlobalEnvResponse"},
                       {"type": "array", "maxItems": 0, "items": {}},
                   ]},
                   description="The environment, or `[]` when none is configured.",
               )},
               description="For keys other than `admin`, secrets are `[REDACTED]`: `authToken`, credential headers, "
                           "values of keys named like credentials (identities and login bodies included) and "
                           "credentials inside URLs.",
               tags=["testing"])
    def get(self, request):
        environment = services.global_env_read()
        return Response(environment if sees_secrets(request) else secrets_masked(environment))

    @operation(Scope.ADMIN, "testing_global_env_set", request=GlobalEnvSerializer,
               responses={200: GlobalEnvResponseSerializer, 400: _ZOD},
               description=(
                   "Replace the environment. `baseUrl` is required; other keys are optional; extra keys "
                   "(string values) become `{{name}}` placeholders. `authToken` is stored encrypted."
               ),
               tags=["testing"])
    def put(self, request):
        values = validate(GlobalEnvSerializer(data=request.data))
        with transaction.atomic():
            return Response(services.global_env_set(values=values))

    @operation(Scope.ADMIN, "testing_global_env_clear", request=None,
               responses={200: OpenApiResponse(response={"type": "string", "enum": ["Success"]})}, tags=["testing"])
    def delete(self, request):
        services.global_env_clear()
        return Response("Success")


class TestRunsView(APIView):
    """``/api/v1/testing/runs``: start a run in the worker (POST), list runs (GET)."""

    @operation(Scope.READ, "testing_runs_list", parameters=[TestRunListQuery],
               responses={200: TestRunSerializer(many=True), 400: _ZOD},
               description="Newest first. The `X-Total-Count` response header carries the number of runs before "
                           "paging. For keys other than `admin`, credentials inside `baseUrl` are `[REDACTED]`.",
               tags=["testing"])
    def get(self, request):
        query = validate(TestRunListQuery(data=query_dict(request.query_params)))
        runs = TestRun.objects.order_by("-created_at", "uuid")
        page, total = page_of(runs, offset=query["offset"], limit=query["limit"])
        return list_response(TestRunSerializer(page, many=True, context={"request": request}).data, total)

    @operation(Scope.ADMIN, "testing_runs_start", request=TestRunStartSerializer,
               responses={202: TestRunSerializer, 400: _ZOD, 404: _NOT_FOUND,
                          409: OpenApiResponse(response={"type": "string"},
                                               description="No usable testing environment.")},
               description="Generate and run security tests in the background against the global testing "
                           "environment. Without `type` every applicable template runs on each endpoint; `type` narrows "
                           "to one. Poll GET /testing/runs/{runId} for the results.",
               tags=["testing"])
    def post(self, request):
        body = validate(TestRunStartSerializer(data=request.data))
        run = services.test_run_start(host=body.get("host"), endpoint=body.get("endpoint"), method=body.get("method"),
                                      template_name=body.get("type"), version=body.get("version"))
        return Response(TestRunSerializer(run, context={"request": request}).data, status=202)


class TestRunView(APIView):
    """``GET /api/v1/testing/runs/{runId}``: a run with the result of each test."""

    @operation(Scope.READ, "testing_run_read",
               description="For keys other than `admin`, the evidence is `[REDACTED]`: every result's and check's "
                           "`message` (excerpts of the target's answers, values sent from the environment) and "
                           "credentials inside `baseUrl`.",
               responses={200: TestRunDetailSerializer,
                          404: OpenApiResponse(response={"type": "string", "enum": ["Test run does not exist."]})},
               tags=["testing"])
    def get(self, request, run_id: str):
        try:
            run = TestRun.objects.prefetch_related("results").get(uuid=uuid.UUID(run_id))
        except (ValueError, TestRun.DoesNotExist) as exc:
            raise TestRunNotFound() from exc
        return Response(TestRunDetailSerializer(run, context={"request": request}).data)
