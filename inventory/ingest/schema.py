"""OpenAPI shapes of the agent protocol (documentation only).

The routes validate bodies with the fast hand-written checks of
``validation.py``; these serializers only describe the wire format for
drf-spectacular.
"""
from rest_framework import serializers


class PairSerializer(serializers.Serializer):
    name = serializers.CharField()
    value = serializers.CharField(allow_null=True)


class UrlSerializer(serializers.Serializer):
    host = serializers.CharField(help_text="Host name; a scheme and port are accepted and stripped.")
    path = serializers.CharField()
    parameters = PairSerializer(many=True, required=False, allow_null=True)


class TraceRequestSerializer(serializers.Serializer):
    url = UrlSerializer()
    headers = PairSerializer(many=True, required=False, allow_null=True)
    body = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    method = serializers.RegexField(r"^[A-Za-z]{1,16}$", help_text="An HTTP method token, e.g. GET.")


class TraceResponseSerializer(serializers.Serializer):
    status = serializers.IntegerField(min_value=100, max_value=599)
    headers = PairSerializer(many=True, required=False, allow_null=True)
    body = serializers.CharField(required=False, allow_null=True, allow_blank=True)


class TraceMetaSerializer(serializers.Serializer):
    incoming = serializers.BooleanField(required=False)
    source = serializers.CharField(required=False, allow_null=True)
    sourcePort = serializers.CharField(required=False, allow_null=True, help_text="String or number.")
    destination = serializers.CharField(required=False, allow_null=True)
    destinationPort = serializers.CharField(required=False, allow_null=True, help_text="String or number.")
    environment = serializers.CharField(required=False, allow_null=True)
    metloSource = serializers.CharField(required=False, allow_null=True)


class RawTraceSerializer(serializers.Serializer):
    """A raw trace (Metlo's pure-Python agent and others)."""

    request = TraceRequestSerializer()
    response = TraceResponseSerializer()
    meta = TraceMetaSerializer(required=False)


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
    authType = serializers.CharField(allow_null=True, required=False)


class ProcessedTraceSerializer(RawTraceSerializer):
    """A processed trace (Metlo 0.1.x agents): headers and bodies withheld, findings pre-computed."""

    processedTraceData = ProcessedTraceDataSerializer(required=False)
    sessionMeta = SessionMetaSerializer(required=False)
    redacted = serializers.BooleanField(required=False)
    analysisType = serializers.ChoiceField(choices=["full", "partial"], required=False)


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
