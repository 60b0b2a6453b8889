"""Routes of SPEC "Data classes and data fields": thin views over ``classification.services``."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import validate
from core.openapi import FIELD_NOT_FOUND, SUCCESS, VALIDATION, operation
from core.scopes import Scope

from . import services
from .serializers import (
    DataClassSerializer,
    DataFieldSerializer,
    UpdateClassesSerializer,
    UpdateDataPathSerializer,
    UpdateEntitySerializer,
)

DATA_FIELD_ID = OpenApiParameter("data_field_id", str, OpenApiParameter.PATH, description="Data field uuid.")
TAGS = ["data classes and data fields"]


class DataClassListView(APIView):
    """``GET /data-class``: the enabled data classes."""

    @operation(Scope.READ, "data_class_list", responses={200: DataClassSerializer(many=True)}, tags=TAGS)
    def get(self, request):
        return Response(DataClassSerializer(services.data_classes_enabled(), many=True).data)


class DataFieldUpdateClassesView(APIView):
    """``POST /data-field/{id}/update-classes``."""

    @operation(Scope.ADMIN, "data_field_update_classes", parameters=[DATA_FIELD_ID],
               request=UpdateClassesSerializer,
               responses={200: DataFieldSerializer, 400: VALIDATION, 404: FIELD_NOT_FOUND},
               description="Set the field's classes. `dataSection` and `dataPath` must name this field (else 404). "
                           "Removed classes become false positives, which detection never re-adds. The endpoint's "
                           "riskScore is recomputed.",
               tags=TAGS)
    def post(self, request, data_field_id: str):
        data = validate(UpdateClassesSerializer(data=request.data))
        field = services.data_field_update_classes(
            data_field_id=data_field_id,
            data_classes=data["dataClasses"],
            data_section=data["dataSection"],
            data_path=data["dataPath"],
        )
        return Response(DataFieldSerializer(field).data)


class DataFieldView(APIView):
    """``DELETE /data-field/{id}``."""

    @operation(Scope.ADMIN, "data_field_delete", parameters=[DATA_FIELD_ID],
               responses={200: DataFieldSerializer, 404: FIELD_NOT_FOUND},
               description="Delete the data field and its classification; answers the deleted field. The endpoint's "
                           "riskScore is recomputed.",
               tags=TAGS)
    def delete(self, request, data_field_id: str):
        return Response(DataFieldSerializer(services.data_field_delete(data_field_id=data_field_id)).data)


class DataFieldEntityView(APIView):
    """``PUT /data-field/{id}/update-entity``."""

    @operation(Scope.ADMIN, "data_field_update_entity", parameters=[DATA_FIELD_ID], request=UpdateEntitySerializer,
               responses={200: DataFieldSerializer, 400: VALIDATION, 404: FIELD_NOT_FOUND}, tags=TAGS)
    def put(self, request, data_field_id: str):
        data = validate(UpdateEntitySerializer(data=request.data))
        field = services.data_field_update_entity(data_field_id=data_field_id, entity=data["entity"])
        return Response(DataFieldSerializer(field).data)


class DataFieldDataPathView(APIView):
    """``PUT /data-field/{id}/update-data-path``."""

    @operation(Scope.ADMIN, "data_field_update_data_path", parameters=[DATA_FIELD_ID],
               request=UpdateDataPathSerializer,
               responses={
                   200: DataFieldSerializer,
                   400: VALIDATION,
                   404: FIELD_NOT_FOUND,
                   409: OpenApiResponse(
                       response={"type": "string", "enum": ["Data field already exists with this data path."]},
                       description="Another field of the endpoint and section has that path.",
                   ),
               },
               tags=TAGS)
    def put(self, request, data_field_id: str):
        data = validate(UpdateDataPathSerializer(data=request.data))
        field = services.data_field_update_path(data_field_id=data_field_id, data_path=data["dataPath"])
        return Response(DataFieldSerializer(field).data)


class ClearSensitiveDataView(APIView):
    """``POST /clear-sensitive-data``."""

    @operation(Scope.ADMIN, "clear_sensitive_data", request=None, responses={200: SUCCESS},
               description="Remove every sensitive-data classification (classes, false positives, scanner results), "
                           "set every riskScore to NONE and delete the sensitive-data alerts. Cannot be undone.",
               tags=TAGS)
    def post(self, request):
        services.sensitive_data_clear()
        return Response("Success")


class ClearAllDataFieldsView(APIView):
    """``POST /clear-all-datafields``."""

    @operation(Scope.ADMIN, "clear_all_datafields", request=None, responses={200: SUCCESS},
               description="Delete every data field, set every riskScore to NONE and delete the sensitive-data "
                           "alerts.",
               tags=TAGS)
    def post(self, request):
        services.data_fields_clear_all()
        return Response("Success")
