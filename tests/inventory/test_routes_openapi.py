"""The OpenAPI document describes every inventory, host, data and detection route with real shapes."""
import pytest

pytestmark = pytest.mark.django_db

OPERATIONS = {
    ("get", "/api/v1/endpoints"): None,
    ("delete", "/api/v1/endpoints"): ["uuids"],
    ("get", "/api/v1/endpoint/{endpoint_id}"): None,
    ("delete", "/api/v1/endpoint/{endpoint_id}"): None,
    ("get", "/api/v1/endpoint/{endpoint_id}/usage"): None,
    ("put", "/api/v1/endpoint/{endpoint_id}/authenticated"): ["authenticated"],
    ("put", "/api/v1/endpoint/{endpoint_id}/enable-full-trace-capture"): ["enabled"],
    ("get", "/api/v1/endpoint/{endpoint_id}/suggested-paths"): None,
    ("post", "/api/v1/endpoint/{endpoint_id}/update-paths"): ["paths"],
    ("put", "/api/v1/endpoint/{endpoint_id}/graphql-schema"): ["file"],
    ("delete", "/api/v1/endpoint/{endpoint_id}/graphql-schema"): None,
    ("get", "/api/v1/hosts"): None,
    ("delete", "/api/v1/hosts"): ["hosts"],
    ("get", "/api/v1/hosts-graph"): None,
    ("get", "/api/v1/new-detections"): None,
    ("get", "/api/v1/new-detections-agg"): None,
    ("get", "/api/v1/data-class"): None,
    ("post", "/api/v1/data-field/{data_field_id}/update-classes"): ["dataClasses", "dataSection", "dataPath"],
    ("delete", "/api/v1/data-field/{data_field_id}"): None,
    ("put", "/api/v1/data-field/{data_field_id}/update-entity"): ["entity"],
    ("put", "/api/v1/data-field/{data_field_id}/update-data-path"): ["dataPath"],
    ("post", "/api/v1/clear-sensitive-data"): None,
    ("post", "/api/v1/clear-all-datafields"): None,
}
QUERY = {
    "/api/v1/endpoints": {"hosts", "riskScores", "methods", "dataClasses", "resourcePermissions", "searchQuery",
                          "isAuthenticated", "hostType", "offset", "limit"},
    "/api/v1/hosts": {"searchQuery", "hostType", "sortBy", "sortOrder", "offset", "limit"},
    "/api/v1/new-detections": {"start", "end", "detectionType", "detectionRiskScores", "detectionHosts",
                               "detectionOffset", "detectionLimit"},
}


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from rest_framework.test import APIClient

    with django_db_blocker.unblock():
        response = APIClient().get("/api/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def resolve(schema, node):
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


@pytest.mark.parametrize("method, path", sorted(OPERATIONS))
def test_route_has_a_real_200_response(schema, method, path):
    operation = schema["paths"][path][method]
    content = operation["responses"]["200"]["content"]["application/json"]["schema"]
    resolved = resolve(schema, content)
    assert resolved not in ({}, None)
    assert any(key in resolved for key in ("type", "oneOf", "properties", "enum")), resolved
    assert {"ApiKeyAuth": []} in operation["security"]


@pytest.mark.parametrize("method, path", sorted(k for k, v in OPERATIONS.items() if v))
def test_request_body_documents_its_fields(schema, method, path):
    body = schema["paths"][path][method]["requestBody"]
    media = "multipart/form-data" if path.endswith("graphql-schema") else "application/json"
    properties = resolve(schema, body["content"][media]["schema"])["properties"]
    assert set(OPERATIONS[(method, path)]) <= set(properties)


@pytest.mark.parametrize("path", sorted(QUERY))
def test_list_query_parameters_are_documented(schema, path):
    names = {p["name"] for p in schema["paths"][path]["get"]["parameters"] if p["in"] == "query"}
    assert names == QUERY[path]


def test_endpoint_routes_document_the_404_body(schema):
    response = schema["paths"]["/api/v1/endpoint/{endpoint_id}"]["get"]["responses"]["404"]
    assert response["content"]["application/json"]["schema"]["enum"] == ["Endpoint does not exist."]


def test_new_detections_documents_both_item_shapes(schema):
    content = schema["paths"]["/api/v1/new-detections"]["get"]["responses"]["200"]["content"]["application/json"]
    body = resolve(schema, content["schema"])
    assert set(body["required"]) == {"items", "total"}
    # One body whose items are either shape: an empty page matches exactly one schema.
    item_shapes = resolve(schema, body["properties"]["items"]["items"])["oneOf"]
    assert {shape["$ref"] for shape in item_shapes} == {"#/components/schemas/EndpointListItem",
                                                        "#/components/schemas/DataFieldDetection"}
