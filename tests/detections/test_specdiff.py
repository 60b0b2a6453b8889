"""The Open API Spec Diff rule: traffic compared with the uploaded spec of its host.

The rule is fed as the ingestion pipeline feeds it (``rules_support``): agent traces read, matched
to their endpoints and analysed by the pipeline's own functions, bodies as the pipeline parsed them.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from detections.models import Alert
from detections.openapi.link import endpoints_spec_link
from detections.rules import openapi_rules, specs_of
from detections.services import alerts_raise
from detections.specs import spec_create
from inventory.models import Endpoint
from tests.detections.rules_support import batch_view, response, spec_diff
from tests.factories import EndpointFactory, HostFactory
from tests.inventory.ingest_support import ingest, processed_trace, raw_trace, stored_traces_text  # noqa: F401 (fixture)

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


def descriptions(candidates) -> list[str]:
    assert {c.type for c in candidates} <= {"Open API Spec Diff"}
    return [c.description for c in candidates]


def test_documented_traffic_matching_its_schema_is_no_difference(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    assert spec_diff(pet, "/v1/pets/7", body={"id": 7, "name": "Rex", "tag": None}) == []
    listing = endpoint(host, "/v1/pets")
    assert spec_diff(listing, "/v1/pets", body=[{"id": 1, "name": "a"}]) == []


def test_undocumented_endpoint(petstore, host):
    orders = endpoint(host, "/v1/orders/{param1}")
    candidates = spec_diff(orders, "/v1/orders/9", body={})
    assert descriptions(candidates) == [
        "Endpoint GET /v1/orders/{param1} on shop.example.com is not documented in OpenAPI spec 'petstore'."
    ]
    assert candidates[0].context == {"kind": "undocumented_endpoint", "specs": ["petstore"]}


def test_undocumented_method_is_an_undocumented_endpoint(petstore, host):
    delete = endpoint(host, "/v1/pets/{param1}", method="DELETE")
    assert descriptions(spec_diff(delete, "/v1/pets/7", status=204)) == [
        "Endpoint DELETE /v1/pets/{param1} on shop.example.com is not documented in OpenAPI spec 'petstore'."
    ]


def test_path_outside_the_servers_base_path_is_undocumented(petstore, host):
    bare = endpoint(host, "/pets/{param1}")
    assert len(spec_diff(bare, "/pets/7", body={"id": 7, "name": "x"})) == 1


def test_undocumented_status(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    assert descriptions(spec_diff(pet, "/v1/pets/7", status=500, body="oops", content_type="text/plain")) == [
        "Response status 500 of GET /v1/pets/{param1} on shop.example.com is not documented in OpenAPI spec 'petstore'."
    ]


def test_documented_error_status_via_a_referenced_response(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    assert spec_diff(pet, "/v1/pets/7", status=404, body={"title": "No such pet"},
                     content_type="application/problem+json") == []
    bad = spec_diff(pet, "/v1/pets/7", status=404, body={"detail": "x"}, content_type="application/problem+json")
    assert descriptions(bad) == [
        "Response body of GET /v1/pets/{param1} on shop.example.com (status 404) does not match OpenAPI spec "
        "'petstore': the body is missing required property 'title'."
    ]


def test_status_ranges_and_default_document_a_status(petstore, host):
    create = endpoint(host, "/v1/pets", method="POST")
    assert spec_diff(create, "/v1/pets", status=422, body={"title": "bad"},
                     content_type="application/problem+json") == []
    mine = endpoint(host, "/v1/pets/mine")
    assert spec_diff(mine, "/v1/pets/mine", status=503, body="x") == []


def test_body_not_matching_its_schema_names_the_field_not_the_value(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    body = {"id": "seven", "name": "Rex", "email": "not-an-email", "secretExtra": "s3cr3t-value"}

    candidates = spec_diff(pet, "/v1/pets/7", body=body)

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
    candidates = spec_diff(listing, "/v1/pets", body=[{"id": 1, "name": 5}])
    assert descriptions(candidates)[0].endswith("field '[].name' is not of type string.")


def test_null_where_not_nullable(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    candidates = spec_diff(pet, "/v1/pets/7", body={"id": 1, "name": None})
    assert descriptions(candidates)[0].endswith("field 'name' is null but not nullable.")


def test_body_that_is_not_json(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    candidates = spec_diff(pet, "/v1/pets/7", body="<html>")
    assert descriptions(candidates) == [
        "Response body of GET /v1/pets/{param1} on shop.example.com (status 200) is not valid JSON, "
        "unlike its schema in OpenAPI spec 'petstore'."
    ]


def test_redacted_values_and_empty_bodies_are_not_differences(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")
    assert spec_diff(pet, "/v1/pets/7", body={"id": "[REDACTED]", "name": "x"}) == []
    assert spec_diff(pet, "/v1/pets/7", body="") == []


def test_openapi_3_1_types_and_server_variables():
    spec_create(name="inventory", raw=(SPECS / "inventory31.json").read_bytes())
    item = EndpointFactory(host=HostFactory(name="us.inventory.example.com"), path="/items/{param1}")
    assert spec_diff(item, "/items/17", status=201, body='{"sku": "a1", "note": null}') == []
    bad = spec_diff(item, "/items/17", body='{"sku": 1}', content_type=None)
    assert descriptions(bad)[0].endswith(
        "'inventory': field 'sku' is not of type string.")


def test_a_host_without_a_spec_has_no_differences(petstore, django_assert_num_queries):
    other = EndpointFactory(host=HostFactory(name="other.example.com"), path="/anything")
    view = batch_view([response(other, "/anything", body={})])
    with django_assert_num_queries(1):  # the spec list
        assert openapi_rules(view, specs_of(view)) == []


def test_the_linking_step_links_the_endpoint_to_its_spec_and_the_rule_writes_nothing(petstore, host):
    pet = endpoint(host, "/v1/pets/{param1}")  # created after the upload: not linked yet
    assert Endpoint.objects.get(pk=pet.pk).openapi_spec_name is None
    view = batch_view([response(pet, "/v1/pets/7", body={"id": 7, "name": "Rex"})])
    specs = specs_of(view)

    assert openapi_rules(view, specs) == []
    assert Endpoint.objects.get(pk=pet.pk).openapi_spec_name is None  # the rule only reads

    assert endpoints_spec_link(view.endpoints(), specs) == 1
    assert Endpoint.objects.get(pk=pet.pk).openapi_spec_name == "petstore"
    assert endpoints_spec_link(view.endpoints(), specs) == 0  # already linked: nothing written


def test_the_same_difference_is_raised_once_while_open(petstore, host):
    orders = endpoint(host, "/v1/orders/{param1}")
    for order_id in (1, 2, 3):
        alerts_raise(spec_diff(orders, f"/v1/orders/{order_id}", body={}))
    assert Alert.objects.filter(type="Open API Spec Diff").count() == 1
    assert Alert.objects.get().risk_score == "MEDIUM"


def test_a_batch_costs_a_bounded_number_of_queries_and_the_rule_none(petstore, host, django_assert_num_queries):
    pet = endpoint(host, "/v1/pets/{param1}")
    orders = endpoint(host, "/v1/orders")
    raws = [response(pet, f"/v1/pets/{n}", body='{"id": "x", "name": "a"}') for n in range(30)]
    raws += [response(orders, "/v1/orders", body="[]") for _ in range(30)]
    view = batch_view(raws)
    assert {seen.endpoint.uuid for seen in view.seen} == {pet.uuid, orders.uuid}

    with django_assert_num_queries(3):  # spec list, current spec names, one UPDATE linking /v1/pets/{param1}
        specs = specs_of(view)
        with django_assert_num_queries(0):
            candidates = openapi_rules(view, specs)
        endpoints_spec_link(view.endpoints(), specs)

    assert sorted(set(descriptions(candidates))) == [
        "Endpoint GET /v1/orders on shop.example.com is not documented in OpenAPI spec 'petstore'.",
        "Response body of GET /v1/pets/{param1} on shop.example.com (status 200) does not match OpenAPI spec "
        "'petstore': field 'id' is not of type integer.",
    ]
    assert Endpoint.objects.get(pk=pet.pk).openapi_spec_name == "petstore"
    assert Endpoint.objects.get(pk=orders.pk).openapi_spec_name is None


# ---- through the ingestion route: the pipeline's own batch ---------------------------------------

def test_the_rule_reads_the_pipelines_parse_of_a_body_before_redaction(petstore, ingest, monkeypatch):
    from types import SimpleNamespace

    from detections.rules import openapi as rule

    def read_again(*args, **kwargs):
        raise AssertionError("a body the pipeline parsed as JSON was parsed again")

    monkeypatch.setattr(rule, "json", SimpleNamespace(loads=read_again))
    ingest(raw_trace(host="shop.example.com", path="/v1/pets/7", response_body={"id": "ada@example.com", "name": "Rex"}))

    # The email in 'id' is redacted in the stored trace; the rule saw it before, as a string.
    assert list(Alert.objects.filter(type="Open API Spec Diff").values_list("description", flat=True)) == [
        "Response body of GET /v1/pets/{param1} on shop.example.com (status 200) does not match OpenAPI spec "
        "'petstore': field 'id' is not of type integer."
    ]
    assert "ada@example.com" not in stored_traces_text()
    assert Endpoint.objects.get(path="/v1/pets/{param1}").openapi_spec_name == "petstore"


def test_a_usage_only_v2_trace_is_compared_too(petstore, ingest):
    trace = processed_trace(analysisType="partial")
    trace["request"]["url"] = {"host": "shop.example.com", "path": "/v1/orders/9", "parameters": []}
    ingest(trace, url="/api/v2/log-request/batch")

    assert list(Alert.objects.filter(type="Open API Spec Diff").values_list("description", flat=True)) == [
        "Endpoint GET /v1/orders/{param1} on shop.example.com is not documented in OpenAPI spec 'petstore'."
    ]
