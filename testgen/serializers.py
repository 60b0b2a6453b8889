"""JSON in and out of the test generation and testing environment routes (camelCase wire names)."""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import URLValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.enums import HttpMethod
from core.masking import MaskedForReadKeys, evidence_masked, url_masked
from detections.serializers import TimestampField

from .coverage import coverage_masked
from .evidence import evidence_masked_for_read
from inventory.ingest.credentials import REDACTED
from .identity_serializers import CookieSerializer, IdentitiesField, LoginSerializer, ObjectIdsField, ScopePatternsField
from .placeholders import env_references
from .services.environment import BUILTIN_KEYS
from .templates import template_names, template_versions

# --- query parameters ----------------------------------------------------------------


class _GenerationOptions(serializers.Serializer):
    type = serializers.ChoiceField(choices=[], required=False)
    version = serializers.IntegerField(min_value=1, max_value=1000, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["type"].choices = template_names()

    def validate(self, attrs):
        version = attrs.get("version")
        if version is not None:
            name = attrs.get("type")
            if name is None:
                raise serializers.ValidationError({"version": serializers.ErrorDetail(
                    "A version needs a template type.", code="version_without_type")})
            if version not in template_versions(name):
                shown = ", ".join(str(v) for v in template_versions(name))
                raise serializers.ValidationError({"version": serializers.ErrorDetail(
                    f"Template {name} has no version {version} (available: {shown}).", code="unknown_version")})
        return attrs


class GenTestEndpointQuery(_GenerationOptions):
    """GET /gen-test-endpoint query (``endpoint`` presence is checked before: SPEC's own 400)."""

    endpoint = serializers.CharField(max_length=2048)
    host = serializers.CharField(max_length=255, required=False)
    method = serializers.ChoiceField(choices=HttpMethod.values, required=False)

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("method"), str):
            data = {**data, "method": data["method"].upper()}
        return super().to_internal_value(data)


class GenTestEndpointsQuery(_GenerationOptions):
    """GET /gen-test-endpoints query."""

    host = serializers.CharField(max_length=255)


# --- TestConfig (response documentation; the services build plain dicts) ----------------


@extend_schema_field({"oneOf": [{"type": "integer", "minimum": 0},
                                 {"type": "array", "items": {"type": "integer", "minimum": 0}}]})
class RequestIndexField(serializers.JSONField):
    """An assertion's ``request``: one request index, or a list of them."""


@extend_schema_field({"oneOf": [{"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
                                 {"type": "array", "items": {"type": "array", "items": {"type": "string"},
                                                             "minItems": 2, "maxItems": 2}}]})
class SkipIfEqualsField(serializers.JSONField):
    """A request's ``skipIfEquals``: one pair, or a list of pairs."""


class AssertionSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["status", "header", "body", "duration"])
    field = serializers.CharField(allow_blank=True, help_text="Dotted path into the response (header/body); '' = all of it.")
    condition = serializers.ChoiceField(choices=[
        "equals", "notEquals", "in", "notIn", "contains", "notContains", "lessThan", "greaterThan",
        "matches", "exists", "notExists",
    ])
    value = serializers.JSONField(allow_null=True)
    request = RequestIndexField(required=False, help_text="Extension: index (or list of indices) of the request(s) "
                                                          "checked; all when absent.")
    aggregate = serializers.ChoiceField(choices=["all", "any", "last"], required=False,
                                        help_text="Extension: over several answers, all/any/the last must hold.")
    compare = serializers.ChoiceField(choices=["exact", "similar"], required=False, help_text="Extension.")
    ignoreCase = serializers.BooleanField(required=False, help_text="Extension.")
    precondition = serializers.BooleanField(required=False, help_text="Extension: a sanity check, not the finding.")
    description = serializers.CharField(required=False)
    otherwise = serializers.JSONField(required=False, help_text="Extension: an alternative Assertion.")
    inconclusive = serializers.BooleanField(required=False, help_text="Extension: what the test needs to decide.")
    verdict = serializers.ChoiceField(choices=["refused", "accepted", "loggedIn", "notLoggedIn"], required=False,
                                      help_text="Extension: the answer is a refusal in any form (or not); a login "
                                                "returned the identity's credential (or not).")
    private = serializers.JSONField(required=False, help_text="Extension: {paths, values}: the answer shows none of "
                                                              "the control's sensitive or user-specific values.")
    item = serializers.JSONField(required=False, help_text="Extension: with compare similar, compare a collection "
                                                           "only where it lists the object naming this value (or one "
                                                           "of a list of them).")


class TestRequestSerializer(serializers.Serializer):
    __test__ = False
    description = serializers.CharField()
    headers = serializers.DictField(child=serializers.CharField(allow_blank=True), required=False)
    body = serializers.JSONField(required=False)
    queryParams = serializers.DictField(child=serializers.CharField(allow_blank=True), required=False)
    expectedStatus = serializers.IntegerField(required=False)
    expectedResponse = serializers.JSONField(required=False)
    method = serializers.CharField(required=False, help_text="Extension: HTTP method (default: the test's).")
    url = serializers.CharField(required=False, help_text="Extension: target URL, with placeholders.")
    omitHeaders = serializers.ListField(child=serializers.CharField(), required=False)
    repeat = serializers.IntegerField(required=False)
    stopWhenStatus = serializers.ListField(child=serializers.IntegerField(), required=False)
    timeout = serializers.IntegerField(required=False, help_text="Extension: timeout in ms for this request.")
    payload = serializers.CharField(required=False)
    optional = serializers.BooleanField(required=False)
    skipIfEquals = SkipIfEqualsField(required=False, help_text="Extension: a pair of values, or a list of pairs: "
                                                               "not sent when a pair's two values are equal.")
    identity = serializers.CharField(required=False, help_text="Extension: send this identity's credential.")
    onlyIfAccepted = serializers.IntegerField(required=False, help_text="Extension: send only when that request was "
                                                                        "accepted (not refused in any form).")
    onlyIfLoggedIn = serializers.IntegerField(required=False, help_text="Extension: send only when that login "
                                                                        "returned the identity's credential.")
    skip = serializers.CharField(required=False, help_text="Extension: not sent, and why.")


class TestConfigSerializer(serializers.Serializer):
    __test__ = False
    id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(required=False)
    endpoint = serializers.CharField(help_text="The endpoint's path pattern.")
    method = serializers.CharField()
    requests = TestRequestSerializer(many=True)
    assertions = AssertionSerializer(many=True, required=False)
    host = serializers.CharField(required=False)
    endpointId = serializers.UUIDField(required=False)
    templateName = serializers.CharField(required=False)
    templateVersion = serializers.IntegerField(required=False)
    passedMessage = serializers.CharField(required=False, help_text="Extension: what a pass proved.")


class TestGenerationResultSerializer(serializers.Serializer):
    __test__ = False
    success = serializers.BooleanField()
    templateName = serializers.CharField(required=False)
    templateVersion = serializers.IntegerField(required=False)
    test = TestConfigSerializer(required=False)
    msg = serializers.CharField(required=False, help_text="Present on failure.")


class HostTestGenerationItemSerializer(TestGenerationResultSerializer):
    endpoint = serializers.CharField()
    method = serializers.CharField()


# --- global testing environment ----------------------------------------------------------

_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")
_EXTRA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
RESERVED_NAMES = {"env", "responses", "identities"}
MAX_EXTRA_KEYS = 50
MAX_VALUE_LENGTH = 8192


def _http_url(value: str) -> None:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:  # an unclosed or invalid IPv6 literal ("http://[::1"), a bad port
        raise DjangoValidationError("Enter a valid URL.", code="invalid") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in value) \
            or parts.query or parts.fragment:
        raise DjangoValidationError("Enter a valid URL.", code="invalid")


class StrictCharField(serializers.CharField):
    """A string, and only a string: numbers are not turned into text (zod's ``z.string()``)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class BaseUrlField(serializers.URLField):
    """An http(s) URL without query or fragment; single-label hosts allowed (``http://api:3000``)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Keep the length and NUL-character checks; replace Django's URLValidator (no single-label hosts).
        self.validators = [v for v in self.validators if not isinstance(v, URLValidator)] + [_http_url]

    def to_internal_value(self, data):
        return super().to_internal_value(data).rstrip("/")


ENV_PLACEHOLDER_REFUSED = (
    "{{env.…}} cannot be set through the API: environment variables are read only by "
    "manage.py run_security_tests, for the names in TESTING_ENV_ALLOWLIST (set such a value in the admin)."
)


def _env_placeholder_errors(data: dict) -> dict:
    """Issues for every value (headers: every header value) that refers to an environment variable."""
    errors: dict = {}
    for key, value in data.items():
        if key == "headers" and isinstance(value, dict):
            nested = {name: [serializers.ErrorDetail(ENV_PLACEHOLDER_REFUSED, code="env_placeholder")]
                      for name, header_value in value.items() if env_references(header_value)}
            if nested:
                errors[key] = nested
        elif env_references(value):
            errors[key] = [serializers.ErrorDetail(ENV_PLACEHOLDER_REFUSED, code="env_placeholder")]
    return errors


class GlobalEnvSerializer(serializers.Serializer):
    """PUT /testing/global-env body: SPEC's keys plus extra string keys (custom placeholders).

    No value may refer to an environment variable (``{{env.NAME}}``, DECISIONS §8) unless the
    context says ``allow_env_placeholders`` (the operators' admin form).
    """

    baseUrl = BaseUrlField(max_length=2048)
    authToken = StrictCharField(max_length=MAX_VALUE_LENGTH, required=False, allow_blank=True, trim_whitespace=False)
    testUserId = StrictCharField(max_length=255, required=False, trim_whitespace=False)
    timeout = serializers.IntegerField(min_value=1, max_value=600_000, required=False,
                                       help_text="Per-request timeout, milliseconds.")
    retries = serializers.IntegerField(min_value=0, max_value=10, required=False,
                                       help_text="Retries of a request on connection errors.")
    headers = serializers.DictField(child=StrictCharField(max_length=MAX_VALUE_LENGTH, allow_blank=True,
                                                          trim_whitespace=False), required=False)
    login = LoginSerializer(required=False, help_text="How the primary identity logs in (DECISIONS §8).")
    identities = IdentitiesField(required=False, help_text="Further test users (DECISIONS §8).")
    objectIds = ObjectIdsField(required=False, help_text="The primary identity's own object ids per resource "
                                                        "type, written to by generated writes.")
    cookie = CookieSerializer(required=False, help_text="The primary identity's credential cookie {name, value?} "
                                                        "(its value set by the login when there is one).")
    exclude = ScopePatternsField(required=False, help_text="Endpoints removed from every run: [{path, methods?}].")
    allowDestructive = ScopePatternsField(required=False, help_text=(
        "State-resetting endpoints the operator accepts as test targets: [{path, methods?}]."))

    def validate_headers(self, value: dict) -> dict:
        if len(value) > 100:
            raise serializers.ValidationError("At most 100 headers.")
        for name, header_value in value.items():
            if not _HEADER_NAME.match(name):
                raise serializers.ValidationError(f"Invalid header name: {name!r}.")
            if "\r" in header_value or "\n" in header_value:
                raise serializers.ValidationError(f"Header {name} has a line break in its value.")
        return value

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            return super().to_internal_value(data)
        extras = [k for k in data if k not in self.fields]
        errors: dict = {}
        if len(extras) > MAX_EXTRA_KEYS:
            errors["non_field_errors"] = [f"At most {MAX_EXTRA_KEYS} extra keys."]
        for name in extras:
            if not _EXTRA_NAME.match(str(name)) or name in RESERVED_NAMES:
                errors[name] = [serializers.ErrorDetail(
                    "Extra keys are placeholder names: a letter or _, then letters, digits or _ (at most 64); "
                    "'env', 'responses' and 'identities' are reserved.", code="invalid_key")]
            else:
                # Each extra key is validated as a string like the declared ones.
                self.fields[name] = StrictCharField(max_length=MAX_VALUE_LENGTH, allow_blank=True,
                                                    trim_whitespace=False)
        try:
            values = super().to_internal_value({k: v for k, v in data.items() if k not in errors})
        except serializers.ValidationError as exc:
            errors.update(exc.detail)
            values = {}
        if not self.context.get("allow_env_placeholders"):
            for key, issue in _env_placeholder_errors(data).items():
                errors.setdefault(key, issue)
        if errors:
            raise serializers.ValidationError(errors)
        if values.get("authToken") == "":
            values.pop("authToken")
        return values


class GlobalEnvResponseSerializer(serializers.Serializer):
    """The global environment as shown (only the keys that were set; extra keys too)."""

    baseUrl = serializers.CharField()
    authToken = serializers.CharField(required=False)
    testUserId = serializers.CharField(required=False)
    timeout = serializers.IntegerField(required=False)
    retries = serializers.IntegerField(required=False)
    headers = serializers.DictField(child=serializers.CharField(), required=False)
    login = serializers.JSONField(required=False)
    identities = serializers.JSONField(required=False)
    objectIds = serializers.DictField(child=serializers.CharField(), required=False)
    cookie = serializers.JSONField(required=False)
    exclude = serializers.JSONField(required=False)
    allowDestructive = serializers.JSONField(required=False)


assert set(BUILTIN_KEYS) == set(GlobalEnvSerializer._declared_fields)


# --- test runs -------------------------------------------------------------------------------


class TestRunStartSerializer(_GenerationOptions):
    """POST /testing/runs body: what to test (all optional: every endpoint of every host)."""

    __test__ = False
    host = serializers.CharField(max_length=255, required=False)
    endpoint = serializers.CharField(max_length=2048, required=False,
                                     help_text="Path pattern, concrete path or endpoint uuid.")
    method = serializers.ChoiceField(choices=HttpMethod.values, required=False)

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("method"), str):
            data = {**data, "method": data["method"].upper()}
        return super().to_internal_value(data)


class TestRunListQuery(serializers.Serializer):
    __test__ = False
    offset = serializers.IntegerField(min_value=0, default=0)
    limit = serializers.IntegerField(min_value=0, max_value=500, default=10)


class TestRunCheckSerializer(serializers.Serializer):
    __test__ = False
    description = serializers.CharField()
    outcome = serializers.ChoiceField(choices=["passed", "failed", "skipped"])
    message = serializers.CharField(allow_blank=True)
    precondition = serializers.BooleanField()


class TestRunResultSerializer(serializers.Serializer):
    __test__ = False
    testId = serializers.CharField(source="test_id")
    name = serializers.CharField()
    templateName = serializers.CharField(source="template_name")
    host = serializers.CharField()
    method = serializers.CharField()
    endpoint = serializers.CharField()
    outcome = serializers.CharField()
    message = serializers.CharField()
    checks = TestRunCheckSerializer(many=True)
    severity = serializers.CharField(allow_null=True, help_text=(
        "FAILED results: how bad the finding is (HIGH, MEDIUM; by template, docs/testgen.md); null otherwise."))
    evidence = serializers.JSONField(allow_null=True, help_text=(
        "FAILED/ERROR results: the request/response pair that decided the outcome (secrets redacted): "
        "request {index, description, method, url, headers, body, bodyTruncated}, response {status, headers, "
        "body, bodyTruncated, bodySize, durationMs} or {status: null, error, durationMs}; null otherwise."))
    numRequests = serializers.IntegerField(source="num_requests")
    durationMs = serializers.FloatField(source="duration_ms")

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["severity"] = data["severity"] or None
        return data


class TestRunSerializer(MaskedForReadKeys, serializers.Serializer):
    """A run; for keys other than admin, credentials inside ``baseUrl`` are masked."""

    __test__ = False
    uuid = serializers.UUIDField()
    status = serializers.CharField()
    source = serializers.CharField()
    host = serializers.CharField(allow_null=True)
    endpoint = serializers.CharField(allow_null=True)
    method = serializers.CharField(allow_null=True)
    type = serializers.CharField(source="template_name", allow_null=True)
    version = serializers.IntegerField(source="template_version", allow_null=True)
    baseUrl = serializers.CharField(source="base_url")
    numTests = serializers.IntegerField(source="num_tests")
    numPassed = serializers.IntegerField(source="num_passed")
    numFailed = serializers.IntegerField(source="num_failed")
    numErrors = serializers.IntegerField(source="num_errors")
    numInconclusive = serializers.IntegerField(source="num_inconclusive")
    numNotGenerated = serializers.IntegerField(source="num_not_generated")
    error = serializers.CharField(allow_null=True)
    createdAt = TimestampField(source="created_at")
    startedAt = TimestampField(source="started_at", allow_null=True)
    finishedAt = TimestampField(source="finished_at", allow_null=True)

    def to_representation(self, instance):
        data = super().to_representation(instance)
        for key in ("host", "endpoint", "method", "type", "error"):
            data[key] = data[key] or None
        return data

    def masked(self, data: dict) -> dict:
        return {**data, "baseUrl": url_masked(data["baseUrl"])}


class TestRunDetailSerializer(TestRunSerializer):
    """A run with its results. For keys other than admin the evidence is masked: each result's and
    check's ``message`` (excerpts of the target's answers, values sent from the environment, error
    texts quoting URLs) becomes ``"[REDACTED]"``; outcomes, names, descriptions and counts stay."""

    __test__ = False
    results = TestRunResultSerializer(many=True)
    coverage = serializers.JSONField(allow_null=True, help_text=(
        "The run's coverage (null until recorded): findings by severity; per endpoint its tests' outcomes, "
        "per identity the requests sent and their statuses, requests not sent and tests not decided with the "
        "reason and the environment keys that would decide them; endpoints not tested and why; the keys to "
        "configure with the number of tests each would decide (docs/testgen.md)."))

    def masked(self, data: dict) -> dict:
        results = [
            {**result, "message": evidence_masked(result["message"]),
             "checks": [{**check, "message": evidence_masked(check["message"])} for check in result["checks"]],
             "evidence": evidence_masked_for_read(result["evidence"])}
            for result in data["results"]
        ]
        return {**super().masked(data), "results": results, "coverage": coverage_masked(data["coverage"], REDACTED)}
