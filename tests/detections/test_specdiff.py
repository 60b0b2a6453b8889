"""The Open API Spec Diff rule: traffic compared with the uploaded spec of its host."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from detections.models import Alert
from detections.services import alerts_raise
from detections.specdiff import spec_diff_candidates
from detections.specs import spec_create
from inventory.models import ApiTrace, Endpoint
from tests.factories import EndpointFactory, HostFactory

pytestmark = pytest.mark.django_db

SPECS = Path(__file__).parent / "specs"


@pytest.fixture
def petstore():
    return spec_create(name="petstore", raw=(SPECS / "petstore.yaml").read_bytes())


@pytest.fixture
def host():
    return HostFactory(name="shop.example.com")


def endpoint(host, path, method="GET") -> Endpoint:
    return EndpointFactory(host=host, method=method, path=path)


def trace(path, status=200, body="", content_type="application/json") -> ApiTrace:
    headers = [{"name": "Content-Type", "value": content_type}] if content_type else []
    return ApiTrace(path=path, method="GET", host="shop.example.com", response_status=status,
                    response_headers=headers, response_body=body if isinstance(body, str) else json.dumps(body))


def descriptions(candidates) -> list[str]:
    assert {c.type for c in candidates} <= {"Open API Spec Diff"}
    return [c.description for c in candidates]


def test_documented_traffic_matching_its_schema_is_no_difference(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    assert spec_diff_candidates(endpoint=pet, trace=trace("/v1/pets/7", body={"id": 7, "name": "Rex", "tag": None})) == []
    listing = endpoint(host, "/v1/pets")
    assert spec_diff_candidates(endpoint=listing, trace=trace("/v1/pets", body=[{"id": 1, "name": "a"}])) == []


def test_undocumented_endpoint(petstore, host):
    orders = endpoint(host, "/v1/orders/{param1}")
    candidates = spec_diff_candidates(endpoint=orders, trace=trace("/v1/orders/9", body={}))
    assert descriptions(candidates) == [
        "Endpoint GET /v1/orders/{param1} on shop.example.com is not documented in OpenAPI spec 'petstore'."
    ]
    assert candidates[0].context == {"kind": "undocumented_endpoint", "specs": ["petstore"]}


def test_undocumented_method_is_an_undocumented_endpoint(petstore, host):
    delete = endpoint(host, "/v1/pets/{param1}", method="DELETE")
    assert descriptions(spec_diff_candidates(endpoint=delete, trace=trace("/v1/pets/7", status=204))) == [
        "Endpoint DELETE /v1/pets/{param1} on shop.example.com is not documented in OpenAPI spec 'petstore'."
    ]


def test_path_outside_the_servers_base_path_is_undocumented(petstore, host):
    bare = endpoint(host, "/pets/{param1}")
    assert len(spec_diff_candidates(endpoint=bare, trace=trace("/pets/7", body={"id": 7, "name": "x"}))) == 1


def test_undocumented_status(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    assert descriptions(spec_diff_candidates(endpoint=pet, trace=trace("/v1/pets/7", status=500, body="oops",
                                                                       content_type="text/plain"))) == [
        "Response status 500 of GET /v1/pets/{param1} on shop.example.com is not documented in OpenAPI spec 'petstore'."
    ]


def test_documented_error_status_via_a_referenced_response(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    ok = trace("/v1/pets/7", status=404, body={"title": "No such pet"}, content_type="application/problem+json")
    assert spec_diff_candidates(endpoint=pet, trace=ok) == []
    bad = trace("/v1/pets/7", status=404, body={"detail": "x"}, content_type="application/problem+json")
    assert descriptions(spec_diff_candidates(endpoint=pet, trace=bad)) == [
        "Response body of GET /v1/pets/{param1} on shop.example.com (status 404) does not match OpenAPI spec "
        "'petstore': the body is missing required property 'title'."
    ]


def test_status_ranges_and_default_document_a_status(petstore, host):
    create = endpoint(host, "/v1/pets", method="POST")
    assert spec_diff_candidates(endpoint=create, trace=trace("/v1/pets", status=422, body={"title": "bad"},
                                                             content_type="application/problem+json")) == []
    mine = endpoint(host, "/v1/pets/mine")
    assert spec_diff_candidates(endpoint=mine, trace=trace("/v1/pets/mine", status=503, body="x")) == []


def test_body_not_matching_its_schema_names_the_field_not_the_value(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    body = {"id": "seven", "name": "Rex", "email": "not-an-email", "secretExtra": "s3cr3t-value"}

    candidates = spec_diff_candidates(endpoint=pet, trace=trace("/v1/pets/7", body=body))

    prefix = "Response body of GET /v1/pets/{param1} on shop.example.com (status 200) does not match OpenAPI spec 'petstore': "
    assert descriptions(candidates) == [
        prefix + "the body has undocumented property 'secretExtra'.",
        prefix + "field 'email' does not match format 'email'.",
        prefix + "field 'id' is not of type integer.",
    ]
    assert not any("seven" in c.description or "s3cr3t" in c.description for c in candidates)
    assert candidates[2].context == {"kind": "schema_mismatch", "spec": "petstore", "template": "/pets/{petId}",
                                     "statusCode": 200, "field": "id"}


def test_array_items_are_named_with_brackets(petstore, host):
    listing = endpoint(host, "/v1/pets")
    candidates = spec_diff_candidates(endpoint=listing, trace=trace("/v1/pets", body=[{"id": 1, "name": 5}]))
    assert descriptions(candidates)[0].endswith("field '[].name' is not of type string.")


def test_null_where_not_nullable(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    candidates = spec_diff_candidates(endpoint=pet, trace=trace("/v1/pets/7", body={"id": 1, "name": None}))
    assert descriptions(candidates)[0].endswith("field 'name' is null but not nullable.")


def test_body_that_is_not_json(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    candidates = spec_diff_candidates(endpoint=pet, trace=trace("/v1/pets/7", body="<html>"))
    assert descriptions(candidates) == [
        "Response body of GET /v1/pets/{param1} on shop.example.com (status 200) is not valid JSON, "
        "unlike its schema in OpenAPI spec 'petstore'."
    ]


def test_redacted_values_and_empty_bodies_are_not_differences(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    assert spec_diff_candidates(endpoint=pet, trace=trace("/v1/pets/7", body={"id": "[REDACTED]", "name": "x"})) == []
    assert spec_diff_candidates(endpoint=pet, trace=trace("/v1/pets/7", body="")) == []


def test_openapi_3_1_types_and_server_variables():
    spec_create(name="inventory", raw=(SPECS / "inventory31.json").read_bytes())
    item = EndpointFactory(host=HostFactory(name="us.inventory.example.com"), path="/items/{param1}")
    ok = ApiTrace(path="/items/a1", response_status=201, response_headers={"content-type": "application/json"},
                  response_body='{"sku": "a1", "note": null}')
    assert spec_diff_candidates(endpoint=item, trace=ok) == []
    bad = ApiTrace(path="/items/a1", response_status=200, response_headers=[], response_body='{"sku": 1}')
    assert descriptions(spec_diff_candidates(endpoint=item, trace=bad))[0].endswith(
        "'inventory': field 'sku' is not of type string.")


def test_a_host_without_a_spec_has_no_differences(petstore, django_assert_num_queries):
    other = EndpointFactory(host=HostFactory(name="other.example.com"), path="/anything")
    with django_assert_num_queries(1):
        assert spec_diff_candidates(endpoint=other, trace=trace("/anything", body={})) == []


def test_the_rule_links_the_endpoint_to_its_spec(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")  # created after the upload: not linked yet
    assert Endpoint.objects.get(pk=pet.pk).openapi_spec_name is None

    spec_diff_candidates(endpoint=pet, trace=trace("/v1/pets/7", body={"id": 7, "name": "Rex"}))

    assert pet.openapi_spec_name == "petstore"
    assert Endpoint.objects.get(pk=pet.pk).openapi_spec_name == "petstore"


def test_the_same_difference_is_raised_once_while_open(petstore, host):
    orders = endpoint(host, "/v1/orders/{param1}")
    for order_id in (1, 2, 3):
        alerts_raise(spec_diff_candidates(endpoint=orders, trace=trace(f"/v1/orders/{order_id}", body={})))
    assert Alert.objects.filter(type="Open API Spec Diff").count() == 1
    assert Alert.objects.get().risk_score == "MEDIUM"


def test_batch_takes_pipeline_shaped_rows_with_a_bounded_number_of_queries(petstore, host, django_assert_num_queries):
    from types import SimpleNamespace

    from detections.specdiff import spec_diff_batch

    pet = endpoint(host, "/v1/pets/{param1}")
    orders = endpoint(host, "/v1/orders")
    row = lambda e: SimpleNamespace(uuid=e.uuid, method=e.method, path=e.path, host=SimpleNamespace(name=host.name))  # noqa: E731
    sent = lambda path, status, body: SimpleNamespace(  # noqa: E731
        path=path, status=status, resp_headers=[("content-type", "application/json")], resp_body=body)
    pairs = [(row(pet), sent(f"/v1/pets/{n}", 200, '{"id": "x", "name": "a"}')) for n in range(30)]
    pairs += [(row(orders), sent("/v1/orders", 200, "[]")) for _ in range(30)]

    with django_assert_num_queries(3):  # spec list, current spec names, one UPDATE linking /v1/pets/{param1}
        candidates = spec_diff_batch(pairs)

    assert sorted({c.description for c in candidates}) == [
        "Endpoint GET /v1/orders on shop.example.com is not documented in OpenAPI spec 'petstore'.",
        "Response body of GET /v1/pets/{param1} on shop.example.com (status 200) does not match OpenAPI spec "
        "'petstore': field 'id' is not of type integer.",
    ]
    assert Endpoint.objects.get(pk=pet.pk).openapi_spec_name == "petstore"
    assert Endpoint.objects.get(pk=orders.pk).openapi_spec_name is None
