"""Webhooks on the wire (DECISIONS §7): camelCase, runs newest first."""
from __future__ import annotations

from django.core.validators import URLValidator
from rest_framework import serializers

from core.enums import AlertType
from core.fields import StrictCharField, TimestampField
from core.masking import MaskedForReadKeys, url_masked

from . import http, policy


class WebhookRunSerializer(serializers.Serializer):
    """One delivery attempt. ``statusCode`` is null when no HTTP answer arrived; ``msg`` is the error
    text or the receiver's answer (at most 1,000 characters)."""

    ok = serializers.BooleanField()
    statusCode = serializers.IntegerField(source="status_code", allow_null=True)
    msg = serializers.CharField()
    payload = serializers.JSONField()
    createdAt = TimestampField(source="created_at")


class WebhookSerializer(MaskedForReadKeys, serializers.Serializer):
    """A webhook as shown; for keys other than admin, credentials inside ``url`` are masked
    (userinfo, credential query parameters, token-like path segments: ``core.masking.url_masked``)."""

    uuid = serializers.UUIDField()
    url = serializers.CharField()
    alertTypes = serializers.ListField(child=serializers.CharField(), source="alert_types")
    hosts = serializers.ListField(child=serializers.CharField())
    maxRetries = serializers.IntegerField(source="max_retries")
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")
    runs = WebhookRunSerializer(many=True, source="runs.all", help_text="The last 10 attempts, newest first.")

    def masked(self, data: dict) -> dict:
        return {**data, "url": url_masked(data["url"])}


class WebhookUrlField(serializers.URLField):
    """An absolute http(s) URL of at most 2,048 characters. Single-label hosts (``http://receiver:8080``)
    are accepted, unlike Django's URLValidator: private targets are the SSRF guard's business."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 2048)
        super().__init__(**kwargs)
        self.validators = [v for v in self.validators if not isinstance(v, URLValidator)]

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            http.target_parse(value)
        except http.TargetError:
            self.fail("invalid")
        return value


class WebhookInputSerializer(serializers.Serializer):
    """POST /api/v1/webhook body (PUT: any subset). Unless WEBHOOK_ALLOW_PRIVATE_TARGETS is on, a URL
    whose host resolves to a loopback, private, link-local or metadata address is refused."""

    url = WebhookUrlField()
    alertTypes = serializers.ListField(
        child=serializers.ChoiceField(choices=AlertType.values), required=False, default=list,
        max_length=len(AlertType.values), help_text="Alert types to receive; empty means all.",
    )
    hosts = serializers.ListField(
        child=StrictCharField(max_length=255), required=False, default=list, max_length=100,
        help_text="Hosts whose alerts to receive; empty means all.",
    )
    maxRetries = serializers.IntegerField(
        min_value=0, max_value=policy.MAX_RETRIES_LIMIT, required=False, default=policy.DEFAULT_MAX_RETRIES,
        help_text="Retries after a 5xx answer.",
    )

    def validate_url(self, value: str) -> str:
        try:
            http.target_check(value)
        except http.TargetError as exc:
            raise serializers.ValidationError(str(exc), code="target_refused") from None
        return value

    def service_kwargs(self) -> dict:
        """Validated data under the service's names (only the fields given, for PUT)."""
        names = {"url": "url", "alertTypes": "alert_types", "hosts": "hosts", "maxRetries": "max_retries"}
        return {names[key]: value for key, value in self.validated_data.items()}
