"""One exception handler: SPEC/DECISIONS error bodies for every failure."""
import logging

import pytest
from django.urls import path
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import EndpointNotFound, ZodError, validate
from core.params import query_dict

pytestmark = pytest.mark.django_db


class _Query(serializers.Serializer):
    limit = serializers.IntegerField(min_value=0, max_value=500, default=10)
    hostType = serializers.ChoiceField(choices=["ANY", "EXTERNAL", "INTERNAL"], default="ANY")
    hosts = serializers.ListField(child=serializers.CharField(), default=list)
    uuid = serializers.UUIDField(required=False)


class _Body(serializers.Serializer):
    url = serializers.URLField()
    alertTypes = serializers.ListField(child=serializers.ChoiceField(choices=["A", "B"]), allow_empty=False)
    maxRetries = serializers.IntegerField(min_value=0, max_value=10)


class ProbeView(APIView):
    """A view of the test's own, exercising the shared validation and error paths."""

    def get(self, request):
        data = validate(_Query(data=query_dict(request.query_params, list_fields=["hosts"])))
        return Response({"limit": data["limit"], "hostType": data["hostType"], "hosts": data["hosts"]})

    def post(self, request):
        validate(_Body(data=request.data))
        return Response("Success")


class MissingEndpointView(APIView):
    def get(self, request):
        raise EndpointNotFound()


class BoomView(APIView):
    def get(self, request):
        raise RuntimeError("secret-value-should-not-leak")


urlpatterns = [
    path("api/v1/probe", ProbeView.as_view()),
    path("api/v1/missing", MissingEndpointView.as_view()),
    path("api/v1/boom", BoomView.as_view()),
]


def zod_issues(response):
    body = response.json()
    assert response.status_code == 400
    assert body["type"] == "ZOD"
    assert body["message"] == "Invalid parameters"
    assert body["err"]["name"] == "ZodError"
    return body["err"]["issues"]


@pytest.mark.urls(__name__)
class TestValidationBodies:
    def test_limit_above_maximum_is_too_big(self, client):
        issues = zod_issues(client.get("/api/v1/probe?limit=501"))
        assert issues == [{
            "code": "too_big", "maximum": 500, "type": "number", "inclusive": True, "exact": False,
            "path": ["limit"], "message": "Number must be less than or equal to 500",
        }]

    def test_non_numeric_limit_is_invalid_type(self, client):
        issues = zod_issues(client.get("/api/v1/probe?limit=ten"))
        assert issues[0]["code"] == "invalid_type"
        assert issues[0]["expected"] == "number"
        assert issues[0]["path"] == ["limit"]

    def test_bad_enum_lists_the_options(self, client):
        issues = zod_issues(client.get("/api/v1/probe?hostType=SIDEWAYS"))
        assert issues == [{
            "code": "invalid_enum_value", "options": ["ANY", "EXTERNAL", "INTERNAL"], "received": "SIDEWAYS",
            "path": ["hostType"],
            "message": "Invalid enum value. Expected 'ANY' | 'EXTERNAL' | 'INTERNAL', received 'SIDEWAYS'",
        }]

    def test_bad_uuid_is_invalid_string(self, client):
        issues = zod_issues(client.get("/api/v1/probe?uuid=nope"))
        assert issues == [{"code": "invalid_string", "validation": "uuid", "path": ["uuid"], "message": "Invalid uuid"}]

    def test_array_parameters_in_all_three_encodings(self, client):
        assert client.get("/api/v1/probe?hosts=a&hosts=b").json()["hosts"] == ["a", "b"]
        assert client.get("/api/v1/probe?hosts[]=a&hosts[]=b").json()["hosts"] == ["a", "b"]
        assert client.get("/api/v1/probe?hosts=a").json()["hosts"] == ["a"]
        assert client.get("/api/v1/probe").json() == {"limit": 10, "hostType": "ANY", "hosts": []}

    def test_missing_body_fields_are_required_issues(self, client):
        issues = zod_issues(client.post("/api/v1/probe", {}, format="json"))
        assert {"code": "invalid_type", "expected": "string", "received": "undefined", "path": ["url"],
                "message": "Required"} in issues
        assert {i["path"][0] for i in issues} == {"url", "alertTypes", "maxRetries"}

    def test_nested_list_item_issue_has_its_index(self, client):
        issues = zod_issues(client.post(
            "/api/v1/probe", {"url": "http://x.example", "alertTypes": ["A", "Z"], "maxRetries": 1}, format="json"
        ))
        assert len(issues) == 1
        assert issues[0]["path"] == ["alertTypes", 1]
        assert issues[0]["code"] == "invalid_enum_value"

    def test_empty_list_and_bad_url(self, client):
        issues = zod_issues(client.post(
            "/api/v1/probe", {"url": "ftp://x", "alertTypes": [], "maxRetries": 11}, format="json"
        ))
        by_path = {tuple(i["path"]): i for i in issues}
        assert by_path[("url",)]["code"] == "invalid_string" and by_path[("url",)]["validation"] == "url"
        assert by_path[("alertTypes",)]["code"] == "too_small" and by_path[("alertTypes",)]["minimum"] == 1
        assert by_path[("maxRetries",)]["code"] == "too_big"

    def test_wrong_json_type_is_invalid_type(self, client):
        issues = zod_issues(client.post(
            "/api/v1/probe", {"url": "http://x.example", "alertTypes": "A", "maxRetries": "x"}, format="json"
        ))
        by_path = {tuple(i["path"]): i for i in issues}
        assert by_path[("alertTypes",)] == {"code": "invalid_type", "expected": "array", "received": "string",
                                            "path": ["alertTypes"], "message": "Expected array, received string"}
        assert by_path[("maxRetries",)]["expected"] == "number"

    def test_malformed_json_is_a_validation_error_at_the_root(self, client):
        response = client.post("/api/v1/probe", data=b'{"url": ', content_type="application/json")
        issues = zod_issues(response)
        assert issues[0]["path"] == []

    def test_domain_error_keeps_its_json_string(self, client):
        response = client.get("/api/v1/missing")
        assert response.status_code == 404
        assert response.content == b'"Endpoint does not exist."'

    def test_unexpected_error_is_500_without_details_and_logged_with_request_id(self, client, caplog):
        with caplog.at_level(logging.ERROR):
            response = client.get("/api/v1/boom")
        assert response.status_code == 500
        assert response.json() == "Internal server error."
        assert b"secret-value" not in response.content
        request_id = response["X-Request-Id"]
        assert any(getattr(r, "request_id", None) == request_id for r in caplog.records)

    def test_zod_error_can_be_raised_directly(self):
        assert ZodError([]).body["err"] == {"name": "ZodError", "issues": []}


def test_unknown_api_route_is_404_not_found(client):
    response = client.get("/api/v1/no-such-route")
    assert response.status_code == 404
    assert response.json() == "Not found."


def test_unknown_route_outside_the_keyed_api_needs_no_key_to_be_404(anon_client):
    for url in ("/api/v3/batch", "/api", "/elsewhere"):
        response = anon_client.get(url)
        assert response.status_code == 404, url
        assert response.json() == "Not found."


def test_unknown_keyed_api_route_is_401_without_a_valid_key_then_404(anon_client, client):
    # DECISIONS §2: 401 (key) is checked before 404 (unknown route).
    for url in ("/api/v1/nope", "/api/v1/", "/api/v2/log-request/nope", "/api/v1/endpoint/x/nope"):
        response = anon_client.get(url)
        assert response.status_code == 401, url
        assert response.json() == "Client unauthorized"
        wrong = anon_client.get(url, HTTP_AUTHORIZATION="ask_not_a_key")
        assert wrong.status_code == 401, url
        known = client.get(url)
        assert known.status_code == 404, url
        assert known.json() == "Not found."


def test_wrong_method_is_405_json(client):
    response = client.delete("/api/v1/verify")
    assert response.status_code == 405
    assert response.json() == "Method not allowed."
