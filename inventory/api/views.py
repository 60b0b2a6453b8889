"""Routes of SPEC "Endpoints", "Hosts" and "New detections": thin views over the services."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiRequest, OpenApiResponse, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import validate
from core.params import query_validated
from core.renderers import ORJSONRenderer, Prerendered
from core.scopes import Scope, requires_scope
from core.uploads import BoundedUploadView

from inventory.counts import cached_answer

from . import merge, render, serializers as s, services
from .lookup import Page
from core.openapi import ENDPOINT_NOT_FOUND, DeleteBodyAutoSchema, SUCCESS, TOTAL_COUNT_NOTE, VALIDATION, json_string

ENDPOINT_ID = OpenApiParameter("endpoint_id", str, OpenApiParameter.PATH, description="Endpoint uuid.")
ENDPOINT_TAGS = ["endpoints"]
HOST_TAGS = ["hosts"]
DETECTION_TAGS = ["new detections"]


def _cached_list_response(request, route: str, answer) -> Response:
    """A list route's answer through :func:`inventory.counts.cached_answer`, keyed by the raw query
    string: ``answer()`` validates, pages and renders it (``Page``); a repeat within the cache's
    time-to-live at the same inventory version is sent as the bytes rendered then."""
    def compute() -> tuple[bytes, int]:
        page = answer()
        return ORJSONRenderer().render(page.items), page.total

    body, total = cached_answer((route, request.META.get("QUERY_STRING", "")), compute)
    response = Response(Prerendered(body))
    response["X-Total-Count"] = str(total)
    return response


class EndpointListView(APIView):
    """``GET /endpoints`` and ``DELETE /endpoints``."""

    schema = DeleteBodyAutoSchema()

    @requires_scope(Scope.READ)
    @extend_schema(
        operation_id="endpoint_list",
        parameters=[s.EndpointListQuerySerializer],
        responses={200: s.EndpointListItemSerializer(many=True), 400: VALIDATION},
        description="Endpoints ordered by riskScore HIGH→NONE, then lastActive (newest first, nulls last), then "
                    "uuid. Array parameters accept `a=1&a=2`, `a[]=1&a[]=2` and `a=1`. " + TOTAL_COUNT_NOTE,
        tags=ENDPOINT_TAGS,
    )
    def get(self, request):
        def answer():
            params = query_validated(request, s.EndpointListQuerySerializer,
                                     s.EndpointListQuerySerializer.LIST_FIELDS)
            offset, limit = params.pop("offset"), params.pop("limit")
            page = services.endpoints_page(filters=params, offset=offset, limit=limit)
            return Page(items=[render.endpoint_item(row) for row in page.items], total=page.total)

        return _cached_list_response(request, "endpoints", answer)

    @requires_scope(Scope.ADMIN)
    @extend_schema(
        operation_id="endpoint_delete_many",
        request=s.UuidListBodySerializer,
        responses={200: SUCCESS, 400: VALIDATION},
        description="Delete these endpoints with their fields, alerts, traces and usage. Unknown uuids are ignored.",
        tags=ENDPOINT_TAGS,
    )
    def delete(self, request):
        data = validate(s.UuidListBodySerializer(data=request.data))
        services.endpoints_delete(endpoint_ids=data["uuids"])
        return Response("Success")


class EndpointDetailView(APIView):
    """``GET /endpoint/{id}`` and ``DELETE /endpoint/{id}``."""

    @requires_scope(Scope.READ)
    @extend_schema(
        operation_id="endpoint_detail",
        parameters=[ENDPOINT_ID],
        responses={200: s.EndpointDetailSerializer, 404: ENDPOINT_NOT_FOUND},
        description="The endpoint with its data fields, alerts (newest first), recent traces (newest first, at most "
                    "100), `openapiSpec` when its spec is stored and `graphQlSchema` for a GraphQL endpoint.",
        tags=ENDPOINT_TAGS,
    )
    def get(self, request, endpoint_id: str):
        def answer() -> tuple[bytes, None]:
            return services.endpoint_detail_body(endpoint_id=endpoint_id), None

        return Response(Prerendered(cached_answer(("endpoint", endpoint_id), answer)[0]))

    @requires_scope(Scope.ADMIN)
    @extend_schema(
        operation_id="endpoint_delete",
        parameters=[ENDPOINT_ID],
        responses={200: SUCCESS, 404: ENDPOINT_NOT_FOUND},
        description="Delete the endpoint with its data fields, alerts, traces and usage.",
        tags=ENDPOINT_TAGS,
    )
    def delete(self, request, endpoint_id: str):
        services.endpoint_delete(endpoint_id=endpoint_id)
        return Response("Success")


class EndpointUsageView(APIView):
    """``GET /endpoint/{id}/usage``."""

    @requires_scope(Scope.READ)
    @extend_schema(
        operation_id="endpoint_usage",
        parameters=[ENDPOINT_ID],
        responses={200: s.EndpointUsageSerializer, 404: ENDPOINT_NOT_FOUND},
        description="`dailyUsage`: requests per UTC day with traffic in the last 30 days, oldest first. "
                    "`last1MinCnt`: requests in the last 60 seconds.",
        tags=ENDPOINT_TAGS,
    )
    def get(self, request, endpoint_id: str):
        return Response(s.EndpointUsageSerializer(services.endpoint_usage(endpoint_id=endpoint_id)).data)


class EndpointAuthenticatedView(APIView):
    """``PUT /endpoint/{id}/authenticated``."""

    @requires_scope(Scope.ADMIN)
    @extend_schema(
        operation_id="endpoint_set_authenticated",
        parameters=[ENDPOINT_ID],
        request=s.AuthenticatedBodySerializer,
        responses={200: SUCCESS, 400: VALIDATION, 404: ENDPOINT_NOT_FOUND},
        description="Set isAuthenticatedUserSet; it wins over detection in the isAuthenticated filter.",
        tags=ENDPOINT_TAGS,
    )
    def put(self, request, endpoint_id: str):
        services.endpoint_get(endpoint_id=endpoint_id)  # 404 before body validation
        data = validate(s.AuthenticatedBodySerializer(data=request.data))
        services.endpoint_set_authenticated(endpoint_id=endpoint_id, authenticated=data["authenticated"])
        return Response("Success")


class EndpointFullTraceCaptureView(APIView):
    """``PUT /endpoint/{id}/enable-full-trace-capture``."""

    @requires_scope(Scope.ADMIN)
    @extend_schema(
        operation_id="endpoint_set_full_trace_capture",
        parameters=[ENDPOINT_ID],
        request=s.FullTraceCaptureBodySerializer,
        responses={200: SUCCESS, 400: VALIDATION, 404: ENDPOINT_NOT_FOUND},
        description="Turn full trace capture on or off: when on, values classified as sensitive are stored "
                    "in new traces instead of `[REDACTED]` (credentials are always redacted).",
        tags=ENDPOINT_TAGS,
    )
    def put(self, request, endpoint_id: str):
        services.endpoint_get(endpoint_id=endpoint_id)  # 404 before body validation
        data = validate(s.FullTraceCaptureBodySerializer(data=request.data))
        services.endpoint_set_full_trace_capture(endpoint_id=endpoint_id, enabled=data["enabled"])
        return Response("Success")


class EndpointSuggestedPathsView(APIView):
    """``GET /endpoint/{id}/suggested-paths``."""

    @requires_scope(Scope.READ)
    @extend_schema(
        operation_id="endpoint_suggested_paths",
        parameters=[ENDPOINT_ID],
        responses={200: OpenApiResponse(response={"type": "array", "items": {"type": "string"}},
                                        description="Path patterns, best first (at most 100)."),
                   404: ENDPOINT_NOT_FOUND},
        description="Patterns suggested from the newest 2,000 concrete paths observed for the endpoint: a segment "
                    "value seen in under 10% of the paths at its position becomes a parameter.",
        tags=ENDPOINT_TAGS,
    )
    def get(self, request, endpoint_id: str):
        return Response(services.endpoint_suggested_paths(endpoint_id=endpoint_id))


class EndpointUpdatePathsView(APIView):
    """``POST /endpoint/{id}/update-paths``."""

    @requires_scope(Scope.ADMIN)
    @extend_schema(
        operation_id="endpoint_update_paths",
        parameters=[ENDPOINT_ID],
        request=s.UpdatePathsBodySerializer,
        responses={
            200: s.EndpointListItemSerializer(many=True),
            400: OpenApiResponse(
                response={"oneOf": [{"type": "string", "example": "/users//x: must not contain empty segments"},
                                    VALIDATION.response]},
                description='`"<path>: <reason>"` for an unacceptable path, or a validation body.',
            ),
            404: ENDPOINT_NOT_FOUND,
        },
        description="Replace the endpoint's path pattern by these patterns (parameters as whole `{…}` segments). "
                    "Each becomes an endpoint of the same host and method; endpoints whose pattern or observed "
                    "paths match it are merged into it. Answers the resulting endpoints in the order given.",
        tags=ENDPOINT_TAGS,
    )
    def post(self, request, endpoint_id: str):
        services.endpoint_get(endpoint_id=endpoint_id)  # 404 before body validation
        data = validate(s.UpdatePathsBodySerializer(data=request.data))
        endpoints = merge.endpoint_paths_update(endpoint_id=endpoint_id, paths=data["paths"])
        return Response(s.EndpointListItemSerializer(endpoints, many=True).data)


class EndpointGraphQlSchemaView(BoundedUploadView):
    """``PUT`` and ``DELETE /endpoint/{id}/graphql-schema``: multipart only (a urlencoded form cannot
    carry the file), read up to the 5 MB limit and no further (``413``)."""

    upload_max_bytes = services.GRAPHQL_SCHEMA_MAX_BYTES
    upload_too_large = services.GRAPHQL_SCHEMA_TOO_LARGE

    @requires_scope(Scope.ADMIN)
    @extend_schema(
        operation_id="endpoint_graphql_schema_upload",
        parameters=[ENDPOINT_ID],
        request=OpenApiRequest(s.GraphQlSchemaUploadSerializer),
        responses={
            200: SUCCESS,
            400: OpenApiResponse(
                response={"oneOf": [{"type": "string", "enum": ["Endpoint is not a GraphQL endpoint."]},
                                    VALIDATION.response]},
                description="Not a GraphQL endpoint, or a missing, non-UTF-8 or invalid SDL file (validation body).",
            ),
            404: ENDPOINT_NOT_FOUND,
            413: json_string(services.GRAPHQL_SCHEMA_TOO_LARGE, description="The file is over 5 MB."),
        },
        description="Upload the endpoint's GraphQL schema (SDL) as the multipart file part `file`.",
        tags=ENDPOINT_TAGS,
    )
    def put(self, request, endpoint_id: str):
        services.endpoint_get(endpoint_id=endpoint_id)  # 404 before body validation
        data = validate(s.GraphQlSchemaUploadSerializer(data=request.data))
        services.endpoint_graphql_schema_set(endpoint_id=endpoint_id, upload=data["file"])
        return Response("Success")

    @requires_scope(Scope.ADMIN)
    @extend_schema(
        operation_id="endpoint_graphql_schema_delete",
        parameters=[ENDPOINT_ID],
        request=None,
        responses={200: SUCCESS, 404: ENDPOINT_NOT_FOUND},
        tags=ENDPOINT_TAGS,
    )
    def delete(self, request, endpoint_id: str):
        services.endpoint_graphql_schema_clear(endpoint_id=endpoint_id)
        return Response("Success")


class HostListView(APIView):
    """``GET /hosts`` and ``DELETE /hosts``."""

    schema = DeleteBodyAutoSchema()

    @requires_scope(Scope.READ)
    @extend_schema(
        operation_id="host_list",
        parameters=[s.HostListQuerySerializer],
        responses={200: s.HostSerializer(many=True), 400: VALIDATION},
        description="Hosts with at least one endpoint. " + TOTAL_COUNT_NOTE,
        tags=HOST_TAGS,
    )
    def get(self, request):
        def answer():
            params = query_validated(request, s.HostListQuerySerializer)
            return services.hosts_page(
                filters={"searchQuery": params.get("searchQuery"), "hostType": params["hostType"]},
                sort_by=params["sortBy"], sort_order=params["sortOrder"],
                offset=params["offset"], limit=params["limit"],
            )

        return _cached_list_response(request, "hosts", answer)

    @requires_scope(Scope.ADMIN)
    @extend_schema(
        operation_id="host_delete_many",
        request=s.HostListBodySerializer,
        responses={200: SUCCESS, 400: VALIDATION},
        description="Delete these hosts with all their endpoints. Unknown hosts are ignored.",
        tags=HOST_TAGS,
    )
    def delete(self, request):
        data = validate(s.HostListBodySerializer(data=request.data))
        services.hosts_delete(names=data["hosts"])
        return Response("Success")


class HostsGraphView(APIView):
    """``GET /hosts-graph``."""

    @requires_scope(Scope.READ)
    @extend_schema(operation_id="hosts_graph", responses={200: s.HostsGraphSerializer}, tags=HOST_TAGS)
    def get(self, request):
        return Response(services.hosts_graph())


class NewDetectionsView(APIView):
    """``GET /new-detections``."""

    @requires_scope(Scope.READ)
    @extend_schema(
        operation_id="new_detections",
        parameters=[s.NewDetectionsQuerySerializer],
        responses={
            200: s.NewDetectionsSerializer,
            400: VALIDATION,
        },
        description="Endpoints first detected (ENDPOINT) or data fields created (DATA_FIELD) between `start` and "
                    "`end` (inclusive; either may be omitted), newest first.",
        tags=DETECTION_TAGS,
    )
    def get(self, request):
        params = query_validated(request, s.NewDetectionsQuerySerializer, s.NewDetectionsQuerySerializer.LIST_FIELDS)
        page = services.new_detections(params=params)
        if params["detectionType"] == "ENDPOINT":
            items = [render.endpoint_item(row) for row in page.items]
        else:
            items = s.DataFieldDetectionSerializer(page.items, many=True).data
        return Response({"items": items, "total": page.total})


class NewDetectionsAggView(APIView):
    """``GET /new-detections-agg``."""

    @requires_scope(Scope.READ)
    @extend_schema(
        operation_id="new_detections_agg",
        responses={200: s.NewDetectionsAggItemSerializer(many=True)},
        description="For each of the last 30 UTC days (oldest first, today included), the endpoints first "
                    "detected and the data fields created that day.",
        tags=DETECTION_TAGS,
    )
    def get(self, request):
        return Response(s.NewDetectionsAggItemSerializer(services.new_detections_agg(), many=True).data)
