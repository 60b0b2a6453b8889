"""Alert and OpenAPI-spec routes (DECISIONS §6): thin views over ``services`` and ``specs``."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import PayloadTooLarge, validate
from core.paging import list_response, page_of
from core.params import query_dict
from core.scopes import Scope
from core.uploads import BoundedUploadView

from . import services, specs
from core.openapi import CONFLICT, SUCCESS, TOTAL_COUNT_NOTE, UNAUTHORIZED, VALIDATION, json_string, operation
from .serializers import (
    AlertListQuerySerializer,
    AlertSerializer,
    AlertUpdateSerializer,
    SpecSerializer,
    SpecSummarySerializer,
    SpecDriftSerializer,
    SpecUploadSerializer,
)

ALERT_NOT_FOUND = json_string("Alert does not exist.", description="Unknown or malformed alert id.")
SPEC_NOT_FOUND = json_string("Spec does not exist.", description="No spec with this name.")
TOO_LARGE = json_string(specs.SPEC_TOO_LARGE, description="The file is over 5 MB.")
GENERATED_CONFLICT = OpenApiResponse(response={"type": "string"},
                                     description="The spec is generated from traffic (a JSON string saying so).")


class AlertsView(APIView):
    """``GET /api/v1/alerts``."""

    @operation(Scope.READ, "alerts_list", summary="List alerts",
               description="Open first, then risk (high→none), then newest. " + TOTAL_COUNT_NOTE,
               parameters=[AlertListQuerySerializer],
               responses={200: AlertSerializer(many=True), 400: VALIDATION, 401: UNAUTHORIZED}, tags=["alerts"])
    def get(self, request):
        query = validate(AlertListQuerySerializer(
            data=query_dict(request.query_params, list_fields=AlertListQuerySerializer.LIST_FIELDS)
        ))
        alerts = services.alerts_query(
            types=query.get("types"),
            risk_scores=[r.upper() for r in query.get("riskScores") or []],
            statuses=query.get("status"),
            hosts=query.get("hosts"),
            endpoint_id=query.get("endpoint"),
        )
        page, total = page_of(alerts, offset=query["offset"], limit=query["limit"])
        return list_response(AlertSerializer(page, many=True).data, total)


class AlertView(APIView):
    """``GET`` / ``PUT /api/v1/alert/{alertId}``."""

    @operation(Scope.READ, "alert_read", summary="Read one alert",
               responses={200: AlertSerializer, 401: UNAUTHORIZED, 404: ALERT_NOT_FOUND}, tags=["alerts"])
    def get(self, request, alert_id: str):
        return Response(AlertSerializer(services.alert_get(alert_id=alert_id)).data)

    @operation(Scope.ADMIN, "alert_update", summary="Resolve, unresolve, ignore or unignore an alert",
               description=(
                   "Open → Resolved (resolve) or Ignored (ignore); Resolved → Open (unresolve); Ignored → Open "
                   "(unignore). Any other change is 409 with a JSON string such as \"Alert is already resolved.\". "
                   "resolutionMessage is kept on resolve/ignore and cleared when the alert reopens."
               ),
               request=AlertUpdateSerializer,
               responses={200: AlertSerializer, 400: VALIDATION, 401: UNAUTHORIZED, 404: ALERT_NOT_FOUND,
                          409: CONFLICT},
               tags=["alerts"])
    def put(self, request, alert_id: str):
        body = validate(AlertUpdateSerializer(data=request.data))
        alert = services.alert_update(
            alert_id=alert_id, update_type=body["updateType"], resolution_message=body.get("resolutionMessage")
        )
        return Response(AlertSerializer(alert).data)


_UPLOAD_REQUEST = {
    "multipart/form-data": {
        "type": "object",
        "required": ["file"],
        "properties": {"file": {"type": "string", "format": "binary",
                                "description": "An OpenAPI 3.x document, JSON or YAML, at most 5 MB."}},
    }
}


def _upload(request) -> tuple[str | None, bytes]:
    body = validate(SpecUploadSerializer(data=request.data))
    upload = body["file"]
    if upload.size > specs.MAX_SPEC_BYTES:
        raise PayloadTooLarge(specs.SPEC_TOO_LARGE)
    return upload.name, upload.read()


class SpecUploadView(BoundedUploadView):
    """A spec route whose body is the multipart file part ``file`` (a urlencoded form cannot carry
    it), read up to the 5 MB limit and no further (``413``)."""

    upload_max_bytes = specs.MAX_SPEC_BYTES
    upload_too_large = specs.SPEC_TOO_LARGE


class SpecNewView(SpecUploadView):
    """``POST /api/v1/spec/new``."""

    @operation(Scope.ADMIN, "spec_create", summary="Upload an OpenAPI spec",
               description=(
                   "Multipart form with one file part `file` (JSON or YAML OpenAPI 3.x, at most 5 MB, local `$ref`s "
                   "only, at least one absolute server URL). The spec is named after the file (`petstore.yaml` → "
                   "`petstore`); its hosts are the server URLs' hosts. Endpoints of those hosts that it documents "
                   "get `openapiSpecName`, and their traffic is compared with it (alerts of type \"Open API Spec "
                   "Diff\")."
               ),
               request=_UPLOAD_REQUEST,
               responses={201: SpecSummarySerializer, 400: VALIDATION, 401: UNAUTHORIZED, 409: CONFLICT,
                          413: TOO_LARGE},
               tags=["specs"])
    def post(self, request):
        filename, raw = _upload(request)
        spec = specs.spec_create(name=specs.spec_name_from_filename(filename), raw=raw)
        return Response(SpecSummarySerializer(spec).data, status=201)


class SpecsView(APIView):
    """``GET /api/v1/specs``."""

    @operation(Scope.READ, "specs_list", summary="List OpenAPI specs (uploaded and generated from traffic)",
               description="By name, without the documents' text. Every host with endpoints also has a spec "
                           "generated from its traffic, `<host>-generated` (`isAutoGenerated: true`). "
                           + TOTAL_COUNT_NOTE,
               responses={200: SpecSummarySerializer(many=True), 401: UNAUTHORIZED}, tags=["specs"])
    def get(self, request):
        rows = list(specs.specs_list())
        return list_response(SpecSummarySerializer(rows, many=True).data, len(rows))


class SpecView(SpecUploadView):
    """``GET`` / ``PUT`` / ``DELETE /api/v1/spec/{name}``."""

    @operation(Scope.READ, "spec_read", summary="Read an OpenAPI spec",
               description="`spec` holds the file's text as uploaded, or (`isAutoGenerated`) the OpenAPI 3.1 "
                           "document generated from the host's traffic as JSON, as last stored (rebuilt in the "
                           "background a little after the host's inventory changes).",
               responses={200: SpecSerializer, 401: UNAUTHORIZED, 404: SPEC_NOT_FOUND}, tags=["specs"])
    def get(self, request, name: str):
        return Response(SpecSerializer(specs.spec_get(name=name, document=False)).data)

    @operation(Scope.ADMIN, "spec_replace", summary="Replace the document of an uploaded OpenAPI spec",
               description="A generated spec (`isAutoGenerated`) cannot be replaced: 409.",
               request=_UPLOAD_REQUEST,
               responses={200: SpecSummarySerializer, 400: VALIDATION, 401: UNAUTHORIZED, 404: SPEC_NOT_FOUND,
                          409: GENERATED_CONFLICT, 413: TOO_LARGE},
               tags=["specs"])
    def put(self, request, name: str):
        specs.spec_uploaded_get(name=name, action="replaced")
        _, raw = _upload(request)
        return Response(SpecSummarySerializer(specs.spec_replace(name=name, raw=raw)).data)

    @operation(Scope.ADMIN, "spec_delete", summary="Delete an uploaded OpenAPI spec",
               description="Its endpoints lose their openapiSpecName (or take another spec's that documents them). "
                           "A generated spec (`isAutoGenerated`) cannot be deleted: 409 (it goes with its host).",
               responses={200: SUCCESS, 401: UNAUTHORIZED, 404: SPEC_NOT_FOUND, 409: GENERATED_CONFLICT},
               tags=["specs"])
    def delete(self, request, name: str):
        specs.spec_delete(name=name)
        return Response("Success")


class SpecDriftView(APIView):
    """``GET /api/v1/spec/{name}/drift``."""

    @operation(Scope.READ, "spec_drift", summary="Drift between an uploaded spec and the traffic of its hosts",
               description=(
                   "Shadow endpoints (in traffic, not in the spec), documented operations without traffic in the "
                   "trace retention window (`windowDays`), deprecated operations still called (zombies), query "
                   "parameters and headers, statuses and response body fields that differ. Computed from the "
                   "inventory when asked; names and types only, never values. Each list holds at most 1,000 "
                   "items (`summary` counts them all). A generated spec has no drift: 409."
               ),
               responses={200: SpecDriftSerializer, 401: UNAUTHORIZED, 404: SPEC_NOT_FOUND,
                          409: GENERATED_CONFLICT},
               tags=["specs"])
    def get(self, request, name: str):
        return Response(specs.spec_drift_report(name=name))
