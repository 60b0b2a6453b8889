"""Wire shapes (camelCase) of the inventory routes and validation of their inputs."""
from __future__ import annotations

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from classification.serializers import DataFieldSerializer
from core.enums import AlertStatus, AlertType, HostType, HttpMethod, RiskScore
from detections.models import Alert
from inventory.models import ApiTrace, Endpoint

from core.fields import LenientDateTimeField, StrictCharField, TimestampField

MAX_LIMIT = 500
MAX_DETECTION_LIMIT = 50


# --- Query strings -----------------------------------------------------------------------

class PageQuerySerializer(serializers.Serializer):
    """``offset`` ≥ 0 (default 0) and ``limit`` 0–500 (default 10) (DECISIONS §1)."""

    offset = serializers.IntegerField(min_value=0, default=0, help_text="Results to skip.")
    limit = serializers.IntegerField(min_value=0, max_value=MAX_LIMIT, default=10, help_text="Maximum results (0–500).")


class EndpointListQuerySerializer(PageQuerySerializer):
    """Query parameters of GET /endpoints (SPEC), all optional."""

    LIST_FIELDS = ("hosts", "riskScores", "methods", "dataClasses", "resourcePermissions")

    hosts = serializers.ListField(child=serializers.CharField(), required=False, help_text="Hostnames.")
    riskScores = serializers.ListField(child=serializers.ChoiceField(choices=RiskScore.choices), required=False)
    methods = serializers.ListField(child=serializers.ChoiceField(choices=HttpMethod.choices), required=False)
    dataClasses = serializers.ListField(
        child=serializers.CharField(), required=False,
        help_text="Data class names: endpoints with any field carrying any of them.",
    )
    resourcePermissions = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Endpoints with any of these permissions."
    )
    searchQuery = serializers.CharField(
        required=False, allow_blank=True, max_length=255,
        help_text="Case-insensitive substring of path, host, owner or openapiSpecName.",
    )
    isAuthenticated = serializers.ChoiceField(
        choices=["true", "false"], required=False,
        help_text="Effective value: isAuthenticatedUserSet when set, else isAuthenticatedDetected.",
    )
    hostType = serializers.ChoiceField(choices=HostType.choices, default=HostType.ANY)


class HostListQuerySerializer(PageQuerySerializer):
    """Query parameters of GET /hosts."""

    SORT_BY = ("NUM_ENDPOINTS", "NAME")
    SORT_ORDER = ("DESC", "ASC")

    searchQuery = serializers.CharField(required=False, allow_blank=True, max_length=255,
                                        help_text="Case-insensitive substring of the host name.")
    hostType = serializers.ChoiceField(choices=HostType.choices, default=HostType.ANY)
    sortBy = serializers.ChoiceField(choices=SORT_BY, default="NUM_ENDPOINTS")
    sortOrder = serializers.ChoiceField(choices=SORT_ORDER, default="DESC")


class NewDetectionsQuerySerializer(serializers.Serializer):
    """Query parameters of GET /new-detections."""

    LIST_FIELDS = ("detectionRiskScores", "detectionHosts")
    TYPES = ("ENDPOINT", "DATA_FIELD")

    start = LenientDateTimeField(required=False, help_text="ISO 8601; detections at or after it.")
    end = LenientDateTimeField(required=False, help_text="ISO 8601; detections at or before it.")
    detectionType = serializers.ChoiceField(choices=TYPES, default="ENDPOINT")
    detectionRiskScores = serializers.ListField(
        child=serializers.ChoiceField(choices=RiskScore.choices), required=False, default=list
    )
    detectionHosts = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    detectionOffset = serializers.IntegerField(min_value=0, default=0)
    detectionLimit = serializers.IntegerField(min_value=0, max_value=MAX_DETECTION_LIMIT, default=10)

    def validate(self, attrs):
        start, end = attrs.get("start"), attrs.get("end")
        if start and end and start > end:
            raise serializers.ValidationError({"end": ["end must not be before start"]}, code="custom")
        return attrs


# --- Bodies ----------------------------------------------------------------------------

class StrictBooleanField(serializers.BooleanField):
    """A JSON boolean only (zod's ``z.boolean()``); DRF alone would also take ``"yes"`` or ``1``."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class AuthenticatedBodySerializer(serializers.Serializer):
    """Body of PUT /endpoint/{id}/authenticated."""

    authenticated = StrictBooleanField()


class FullTraceCaptureBodySerializer(serializers.Serializer):
    """Body of PUT /endpoint/{id}/enable-full-trace-capture."""

    enabled = StrictBooleanField()


class UuidListBodySerializer(serializers.Serializer):
    """Body of DELETE /endpoints: a non-empty list of endpoint uuids (unknown ones are ignored)."""

    uuids = serializers.ListField(child=serializers.UUIDField(), allow_empty=False, min_length=1, max_length=10_000)


class HostListBodySerializer(serializers.Serializer):
    """Body of DELETE /hosts: a non-empty list of hostnames (unknown ones are ignored)."""

    hosts = serializers.ListField(child=StrictCharField(max_length=255), allow_empty=False, min_length=1,
                                  max_length=10_000)


_SEGMENT_CHAR = r"[^/?#\\<>&=\s\u0000-\u001f\u007f]"


@extend_schema_field({
    "type": "string", "maxLength": 2048, "pattern": "^/(SEG+(/SEG+)*)?$".replace("SEG", _SEGMENT_CHAR),
    "description": "Starts with /, no empty segment, none of ? # \\ < > & =, no whitespace or control "
                   "character, as many segments as the current pattern; parameters as whole {…} segments.",
})
class PathPatternField(StrictCharField):
    """A path pattern of update-paths. The rules are checked by the service (SPEC's 400 string), so the
    pattern is documentation only."""


class UpdatePathsBodySerializer(serializers.Serializer):
    """Body of POST /endpoint/{id}/update-paths (path rules are checked by the service: 400 ``"<path>: <reason>"``)."""

    paths = serializers.ListField(
        child=PathPatternField(max_length=2048, trim_whitespace=False), allow_empty=False, min_length=1,
        max_length=100,
    )


class GraphQlSchemaUploadSerializer(serializers.Serializer):
    """Multipart body of PUT /endpoint/{id}/graphql-schema: one file part named ``file``."""

    file = serializers.FileField(allow_empty_file=False)


# --- Responses -------------------------------------------------------------------------

class EndpointListItemSerializer(serializers.ModelSerializer):
    """SPEC "Endpoint (list item)"."""

    uuid = serializers.UUIDField(read_only=True)
    host = serializers.CharField(source="host.name", help_text="Hostname.")
    riskScore = serializers.ChoiceField(choices=RiskScore.choices, source="risk_score")
    dataClasses = serializers.ListField(child=serializers.CharField(), source="data_classes")
    resourcePermissions = serializers.ListField(child=serializers.CharField(), source="resource_permissions")
    firstDetected = TimestampField(source="first_detected", allow_null=True)
    lastActive = TimestampField(source="last_active", allow_null=True)
    isAuthenticatedDetected = serializers.BooleanField(source="is_authenticated_detected")
    isAuthenticatedUserSet = serializers.BooleanField(
        source="is_authenticated_user_set", allow_null=True, help_text="null until an operator sets it."
    )
    fullTraceCaptureEnabled = serializers.BooleanField(source="full_trace_capture_enabled")
    isGraphQl = serializers.BooleanField(source="is_graphql")
    openapiSpecName = serializers.CharField(source="openapi_spec_name", allow_null=True)
    owner = serializers.CharField()
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")

    class Meta:
        model = Endpoint
        fields = [
            "uuid", "path", "host", "method", "riskScore", "dataClasses", "resourcePermissions", "firstDetected",
            "lastActive", "isAuthenticatedDetected", "isAuthenticatedUserSet", "fullTraceCaptureEnabled",
            "isGraphQl", "openapiSpecName", "owner", "createdAt", "updatedAt",
        ]
        read_only_fields = fields


class EndpointAlertSerializer(serializers.ModelSerializer):
    """An alert in the endpoint detail (DECISIONS §4); riskScore lower case as in the webhook payload."""

    uuid = serializers.UUIDField(read_only=True)
    type = serializers.ChoiceField(choices=AlertType.choices)
    riskScore = serializers.SerializerMethodField()
    status = serializers.ChoiceField(choices=AlertStatus.choices)
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")
    resolutionMessage = serializers.CharField(source="resolution_message", allow_null=True)
    context = serializers.DictField()

    class Meta:
        model = Alert
        fields = ["uuid", "type", "riskScore", "status", "description", "createdAt", "updatedAt",
                  "resolutionMessage", "context"]
        read_only_fields = fields

    def get_riskScore(self, alert) -> str:  # noqa: N802 - wire name
        return alert.risk_score.lower()


class NameValueSerializer(serializers.Serializer):
    name = serializers.CharField()
    value = serializers.CharField()


class ApiTraceSerializer(serializers.ModelSerializer):
    """A trace in the endpoint detail (DECISIONS §4); already redacted when stored."""

    uuid = serializers.UUIDField(read_only=True)
    requestParameters = NameValueSerializer(many=True, source="request_parameters")
    requestHeaders = NameValueSerializer(many=True, source="request_headers")
    requestBody = serializers.CharField(source="request_body")
    responseStatus = serializers.IntegerField(source="response_status")
    responseHeaders = NameValueSerializer(many=True, source="response_headers")
    responseBody = serializers.CharField(source="response_body")
    meta = serializers.DictField()
    createdAt = TimestampField(source="created_at")
    redacted = serializers.BooleanField()

    class Meta:
        model = ApiTrace
        fields = ["uuid", "path", "method", "host", "requestParameters", "requestHeaders", "requestBody",
                  "responseStatus", "responseHeaders", "responseBody", "meta", "createdAt", "redacted"]
        read_only_fields = fields

    def to_representation(self, trace):
        # Stored lists are passed through as they are (agents may send odd items).
        data = super().to_representation(trace)
        data["requestParameters"] = trace.request_parameters
        data["requestHeaders"] = trace.request_headers
        data["responseHeaders"] = trace.response_headers
        return data


class EndpointDetailSerializer(EndpointListItemSerializer):
    """SPEC "Endpoint (detail)": the list item plus fields, alerts, recent traces, spec and GraphQL schema.

    ``openapiSpec`` is present only when the endpoint's spec is stored; ``graphQlSchema``
    only for GraphQL endpoints (null until a schema is uploaded).
    """

    dataFields = DataFieldSerializer(many=True, source="detail_data_fields")
    alerts = EndpointAlertSerializer(many=True, source="detail_alerts")
    traces = ApiTraceSerializer(many=True, source="detail_traces")
    openapiSpec = serializers.DictField(required=False, help_text="Present when the endpoint's spec is stored.")
    graphQlSchema = serializers.CharField(required=False, allow_null=True, help_text="Present for GraphQL endpoints.")

    class Meta(EndpointListItemSerializer.Meta):
        fields = [*EndpointListItemSerializer.Meta.fields, "dataFields", "alerts", "traces", "openapiSpec",
                  "graphQlSchema"]
        read_only_fields = fields

    def to_representation(self, endpoint):
        data = super().to_representation(endpoint)
        data.pop("openapiSpec", None)
        data.pop("graphQlSchema", None)
        spec = getattr(endpoint, "detail_openapi_spec", None)
        if spec is not None:
            data["openapiSpec"] = spec
        if endpoint.is_graphql:
            data["graphQlSchema"] = endpoint.graphql_schema
        return data


class DailyUsageSerializer(serializers.Serializer):
    day = TimestampField(help_text="Start of the UTC day.")
    cnt = serializers.IntegerField()


class EndpointUsageSerializer(serializers.Serializer):
    """SPEC "Endpoint usage"."""

    dailyUsage = DailyUsageSerializer(many=True)
    last1MinCnt = serializers.IntegerField()


class HostSerializer(serializers.Serializer):
    """SPEC "Host"."""

    host = serializers.CharField(source="name")
    numEndpoints = serializers.IntegerField(source="num_endpoints")
    isPublic = serializers.BooleanField(source="is_public")


class HostGraphNodeSerializer(serializers.Serializer):
    numEndpoints = serializers.IntegerField()
    isPublic = serializers.BooleanField()


class HostGraphEdgeSerializer(serializers.Serializer):
    srcHost = serializers.CharField()
    dstHost = serializers.CharField()
    numEndpoints = serializers.IntegerField(help_text="Endpoints of dstHost called from srcHost's addresses.")


class HostsGraphSerializer(serializers.Serializer):
    """``{"hosts": {host: {numEndpoints, isPublic}}, "edges": [{srcHost, dstHost, numEndpoints}]}``."""

    hosts = serializers.DictField(child=HostGraphNodeSerializer())
    edges = HostGraphEdgeSerializer(many=True)


class DetectionEndpointRefSerializer(serializers.Serializer):
    uuid = serializers.UUIDField()
    host = serializers.CharField()
    method = serializers.CharField()
    path = serializers.CharField()


class DataFieldDetectionSerializer(DataFieldSerializer):
    """A new data field: the DataField plus its risk (highest severity of its classes) and endpoint."""

    riskScore = serializers.ChoiceField(choices=RiskScore.choices, source="risk_score")
    apiEndpoint = serializers.SerializerMethodField()

    class Meta(DataFieldSerializer.Meta):
        fields = [*DataFieldSerializer.Meta.fields, "riskScore", "apiEndpoint"]
        read_only_fields = fields

    @extend_schema_field(DetectionEndpointRefSerializer)
    def get_apiEndpoint(self, field) -> dict:  # noqa: N802 - wire name
        endpoint = field.endpoint
        return {"uuid": str(endpoint.uuid), "host": endpoint.host.name, "method": endpoint.method, "path": endpoint.path}


class NewDetectionsSerializer(serializers.Serializer):
    """GET /new-detections: endpoint list items (detectionType=ENDPOINT) or data fields with their endpoint
    (DATA_FIELD), newest first, and the number of matches."""

    # Documentation only (the view builds the body). One object whose items are either kind, rather
    # than two alternative objects: an empty page is then valid under exactly one schema.
    items = PolymorphicProxySerializer(
        component_name="NewDetectionItem",
        serializers=[EndpointListItemSerializer, DataFieldDetectionSerializer],
        resource_type_field_name=None,
        many=True,
    )
    total = serializers.IntegerField(min_value=0)


class NewDetectionsAggItemSerializer(serializers.Serializer):
    """SPEC "New-detection aggregate item"."""

    day = serializers.DateField()
    numEndpoints = serializers.IntegerField()
    numFields = serializers.IntegerField()
