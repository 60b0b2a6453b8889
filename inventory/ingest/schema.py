"""OpenAPI shapes of the agent protocol (documentation only).

The routes validate bodies with the fast hand-written checks of
``validation.py``; these serializers only describe the wire format for
drf-spectacular. The trace serializers document ``wire.py``'s model
(``RAW_TRACE``, ``PROCESSED_TRACE``): ``tests/inventory/test_trace_wire.py``
fails when a key, type, required or nullable flag or limit differs.
"""
from rest_framework import serializers

from .wire import ANALYSIS_TYPES, METHOD_MAX_LENGTH, STATUS_MAX, STATUS_MIN


class PairSerializer(serializers.Serializer):
    name = serializers.CharField(allow_blank=True, help_text="An item with an empty name is ignored.")
    value = serializers.CharField(allow_null=True, allow_blank=True, required=False,
                                  help_text="Text; a number or boolean is accepted and read as text.")


class UrlSerializer(serializers.Serializer):
    host = serializers.CharField(
        allow_blank=True,
        help_text="Host name; a scheme, user information and port are accepted and stripped. "
                  "May be empty when a Host header names the host.",
    )
    path = serializers.CharField(allow_blank=True, help_text="May carry the query string when parameters is empty.")
    parameters = PairSerializer(many=True, required=False, allow_null=True)


class TraceRequestSerializer(serializers.Serializer):
    url = UrlSerializer()
    headers = PairSerializer(many=True, required=False, allow_null=True)
    body = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                 help_text="Text; any other JSON value is accepted and read re-serialised.")
    method = serializers.RegexField(rf"^[A-Za-z]{{1,{METHOD_MAX_LENGTH}}}$",
                                    help_text="An HTTP method token, e.g. GET.")


class TraceResponseSerializer(serializers.Serializer):
    status = serializers.IntegerField(min_value=STATUS_MIN, max_value=STATUS_MAX,
                                      help_text="A number; a string of digits is accepted.")
    headers = PairSerializer(many=True, required=False, allow_null=True)
    body = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                 help_text="Text; any other JSON value is accepted and read re-serialised.")


class TraceMetaSerializer(serializers.Serializer):
    incoming = serializers.BooleanField(required=False)
    source = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    sourcePort = serializers.CharField(required=False, allow_null=True, allow_blank=True, help_text="String or number.")
    destination = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    destinationPort = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                            help_text="String or number.")
    environment = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    metloSource = serializers.CharField(required=False, allow_null=True, allow_blank=True)


class RawTraceSerializer(serializers.Serializer):
    """A raw trace (Metlo's pure-Python agent and others)."""

    request = TraceRequestSerializer()
    response = TraceResponseSerializer()
    meta = TraceMetaSerializer(required=False, allow_null=True)


class ProcessedTraceDataSerializer(serializers.Serializer):
    sensitiveDataDetected = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()), required=False,
        help_text="Class names keyed <reqQuery|reqHeaders|reqBody|resHeaders|resBody>.<path>.",
    )
    dataTypes = serializers.DictField(child=serializers.ListField(child=serializers.CharField()), required=False)
    attackDetections = serializers.DictField(child=serializers.ListField(child=serializers.CharField()),
                                             required=False)
    requestContentType = serializers.CharField(required=False, allow_blank=True)
    responseContentType = serializers.CharField(required=False, allow_blank=True)
    graphqlPaths = serializers.ListField(child=serializers.CharField(), required=False)


class SessionMetaSerializer(serializers.Serializer):
    authenticationProvided = serializers.BooleanField(allow_null=True, required=False)
    authenticationSuccessful = serializers.BooleanField(allow_null=True, required=False)
    authType = serializers.CharField(allow_null=True, allow_blank=True, required=False)


class ProcessedTraceSerializer(RawTraceSerializer):
    """A processed trace (Metlo 0.1.x agents): headers and bodies withheld, findings pre-computed."""

    processedTraceData = ProcessedTraceDataSerializer(required=False, allow_null=True)
    sessionMeta = SessionMetaSerializer(required=False, allow_null=True)
    redacted = serializers.BooleanField(required=False)
    analysisType = serializers.ChoiceField(choices=list(ANALYSIS_TYPES), required=False, allow_null=True)


class SensitiveDataItemSerializer(serializers.Serializer):
    className = serializers.CharField()
    severity = serializers.ChoiceField(choices=["HIGH", "MEDIUM", "LOW", "NONE"])
    regex = serializers.CharField(allow_null=True)
    keyRegex = serializers.CharField(allow_null=True)


class AgentConfigSerializer(serializers.Serializer):
    sensitiveDataList = SensitiveDataItemSerializer(many=True)
    endpoints = serializers.ListField(child=serializers.DictField())
    specs = serializers.ListField(child=serializers.DictField())
    globalFullTraceCapture = serializers.BooleanField()
    encryptionPublicKey = serializers.CharField(allow_null=True)
    authenticationConfig = serializers.ListField(child=serializers.DictField())
    hostMap = serializers.ListField(child=serializers.DictField())
    hostBlockList = serializers.ListField(child=serializers.CharField())
    pathBlockList = serializers.ListField(child=serializers.DictField())
